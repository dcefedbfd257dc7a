"""pytest plugin: start the embedded PostgreSQL and Redis before Django's settings are read.

Loaded with ``-p tests.embedded_services`` (see pyproject.toml). The session registers as a user of the
checkout's embedded services and leaves when it ends: the last user stops the services a user started, and
ones that were already running (``./deidloop services``) are left alone (``config.embedded.ServiceUsers``).
"""
from __future__ import annotations

import os

import pytest

_started = None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    global _started
    from config.embedded import ensure_services
    from config.i18n import compile_catalogues

    compile_catalogues()  # the Spanish pages and scripts read the compiled catalogues
    _started = ensure_services()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Tasks of this run travel on a queue of their own: a worker of a running ``up`` never takes them.
    os.environ.setdefault("DEIDLOOP_QUEUE", f"deidloop-tests-{os.getpid()}")


def pytest_unconfigure(config):
    if _started is not None:
        _started.stop()
