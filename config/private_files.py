"""Files that hold a secret: made once, readable by their owner alone, and never seen half written."""
from __future__ import annotations

import os
from pathlib import Path


def write_once(path: Path, text: str) -> bool:
    """Create ``path`` holding ``text`` (mode 0600) unless it exists; True when this call made it.

    The text is written and synced to a file of this process's own first, then linked to ``path`` in one
    step, which fails when ``path`` exists (a file or a link, never followed). So a process that finds the
    file reads it whole: processes started together on a new data folder (the web processes of ``serve``)
    all read the one secret, never an empty or partial one."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(partial, path, follow_symlinks=False)
        except FileExistsError:
            return False
        return True
    finally:
        partial.unlink(missing_ok=True)
