"""Where the learning core reaches into a dependency's private internals: one module per dependency.

Each module names the version pinned in ``requirements/lock.txt`` and exactly which internal it relies on;
``tests/unit/compat/test_<dependency>.py`` pins that behaviour, so an upgrade that changes it fails one
named test instead of the loop. Like the rest of :mod:`learning.core`, nothing here imports Django.
"""
