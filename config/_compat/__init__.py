"""Where the project's configuration reaches into a dependency's private internals: one module per dependency.

Each module names the version pinned in ``requirements/lock.txt`` and exactly which internal it relies on;
``tests/unit/compat/test_<dependency>.py`` pins that behaviour, so an upgrade that changes it fails one
named test instead of the server. ``config.settings`` imports :mod:`config._compat.plotly`, so that one
imports nothing of Django's.
"""
