"""Files only the server's user can read: written whole or not at all, never through a link."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["read_private", "write_private"]


def write_private(path: str | Path, data: bytes) -> Path:
    """``data`` as the file ``path``: written under a fresh name (mode 0600, no link followed), synced, and
    renamed over ``path``, so a reader never sees half a file."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def read_private(path: str | Path) -> bytes:
    """The bytes of the file ``path``, opened without following a link."""
    descriptor = os.open(Path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        return file.read()
