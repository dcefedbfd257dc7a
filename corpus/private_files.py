"""Files only the server's user can read: written whole or not at all, never through a link."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["read_private", "write_private", "write_once"]


def _written_aside(path: Path, data: bytes) -> Path:
    """``data`` in a fresh file beside ``path`` (mode 0600, no link followed), synced; returns its name."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return partial


def write_private(path: str | Path, data: bytes) -> Path:
    """``data`` as the file ``path``: written under a fresh name and renamed over ``path``, so a reader never
    sees half a file."""
    path = Path(path)
    partial = _written_aside(path, data)
    try:
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def write_once(path: str | Path, data: bytes) -> bool:
    """Create the file ``path`` holding ``data`` unless it exists (a file or a link, never followed); True when
    this call made it. Written under a fresh name and linked into place in one step, so processes started
    together on a new folder (the web processes of ``serve``, reading the secret key) all read the one file
    whole, never an empty or partial one."""
    path = Path(path)
    partial = _written_aside(path, data)
    try:
        os.link(partial, path, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        partial.unlink(missing_ok=True)
    return True


def read_private(path: str | Path) -> bytes:
    """The bytes of the file ``path``, opened without following a link."""
    descriptor = os.open(Path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as file:
        return file.read()
