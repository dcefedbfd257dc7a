"""Where one process leaves bytes for another: trained models and the bases of the next retrain, written by one
worker and read by every other, on whatever host it runs.

One interface, two backends, chosen by the setting ``ARTIFACT_STORE`` (environment ``DEIDLOOP_ARTIFACT_STORE``):

- ``local`` (the embedded default): files under ``DATA_DIR`` — folders 0700, files 0600, written under a fresh
  name and renamed into place, opened without following links. Every process must share that folder.
- ``postgres``: rows of the project's own database (:class:`~annotator.models.StoredArtifact`, its bytes in
  chunks of :data:`CHUNK_BYTES`), so a worker on another machine needs nothing but the database it already
  reaches. A write replaces the artifact in one transaction: a reader sees the old bytes or the new, never part.

Names are relative paths of letters, digits, ``-``, ``_`` and ``.`` separated by ``/`` (``models/job-3-1.pickle``);
anything else (``..``, an absolute path, a backslash) is refused with :class:`ValueError`. The store keeps bytes; what
they mean and whether they are authentic is the caller's (models are signed: ``learning.core.artifacts``).
"""
from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

from django.conf import settings
from django.db import transaction

from annotator.models import StoredArtifact, StoredArtifactChunk
from corpus.private_files import write_private

__all__ = [
    "ArtifactMissing", "ArtifactStore", "CHUNK_BYTES", "LocalStore", "PostgresStore", "STORES", "get_folder", "get_store",
    "put_folder",
]

#: The backends, by the name the setting takes.
STORES = ("local", "postgres")
#: Bytes per row of a stored artifact in PostgreSQL.
CHUNK_BYTES = 1 << 20
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


class ArtifactMissing(FileNotFoundError):
    """No artifact of that name is stored."""


class ArtifactStore(Protocol):
    def write(self, name: str, data: bytes) -> None:
        """Store ``data`` as ``name``, replacing what was there, all at once."""

    def read(self, name: str) -> bytes:
        """The bytes stored as ``name``; :class:`ArtifactMissing` when there are none."""

    def open(self, name: str) -> BinaryIO:
        """The bytes stored as ``name``, to read as a file; :class:`ArtifactMissing` when there are none."""

    def exists(self, name: str) -> bool: ...

    def delete(self, name: str) -> None:
        """Remove ``name`` (nothing happens when it is not stored)."""

    def names(self, prefix: str) -> list[str]:
        """The stored names that start with ``prefix``, the most recently written first."""


def checked_name(name: str) -> str:
    if not isinstance(name, str) or len(name) > 400 or not _NAME.fullmatch(name) or ".." in name.split("/"):
        raise ValueError(f"not an artifact name: {name!r}")
    return name


class LocalStore:
    """Files under ``root``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, name: str) -> Path:
        return self.root / checked_name(name)

    def write(self, name: str, data: bytes) -> None:
        path = self.path(name)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(path, data)

    def read(self, name: str) -> bytes:
        with self.open(name) as file:
            return file.read()

    def open(self, name: str) -> BinaryIO:
        try:
            descriptor = os.open(self.path(name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ArtifactMissing(name) from None
        return os.fdopen(descriptor, "rb")

    def exists(self, name: str) -> bool:
        return self.path(name).is_file()

    def delete(self, name: str) -> None:
        path = self.path(name)
        path.unlink(missing_ok=True)
        # The folders the name made, once empty (a job's own folder), go too; the top folder of a kind stays.
        for folder in list(path.parents)[:len(PurePosixPath(name).parts) - 2]:
            try:
                folder.rmdir()
            except OSError:  # not empty, or gone
                break

    def names(self, prefix: str) -> list[str]:
        folder, _, start = prefix.rpartition("/")
        directory = self.root / checked_name(folder) if folder else self.root
        if not directory.is_dir():
            return []
        found = [(entry.stat().st_mtime_ns, entry.name) for entry in directory.iterdir()
                 if entry.name.startswith(start) and not entry.name.startswith(".") and entry.is_file()]
        return [f"{folder}/{name}" if folder else name for _, name in sorted(found, reverse=True)]


class PostgresStore:
    """Rows of :class:`~annotator.models.StoredArtifact` and its chunks, in the default database."""

    def write(self, name: str, data: bytes) -> None:
        checked_name(name)
        with transaction.atomic():
            StoredArtifact.objects.filter(name=name).delete()
            artifact = StoredArtifact.objects.create(name=name, size=len(data))
            StoredArtifactChunk.objects.bulk_create(
                StoredArtifactChunk(artifact=artifact, index=i, data=data[start:start + CHUNK_BYTES])
                for i, start in enumerate(range(0, max(len(data), 1), CHUNK_BYTES))
            )

    def read(self, name: str) -> bytes:
        # One statement, so one snapshot: a write replacing the artifact meanwhile is seen whole or not at all.
        rows = list(StoredArtifactChunk.objects.filter(artifact__name=checked_name(name)).order_by("index")
                    .values_list("data", "artifact__size"))
        if not rows:
            raise ArtifactMissing(name)
        data = b"".join(bytes(chunk) for chunk, _ in rows)
        if len(data) != rows[0][1]:
            raise ArtifactMissing(f"{name} (found {len(data)} of its {rows[0][1]} bytes)")
        return data

    def open(self, name: str) -> BinaryIO:
        return io.BytesIO(self.read(name))

    def exists(self, name: str) -> bool:
        return StoredArtifact.objects.filter(name=checked_name(name)).exists()

    def delete(self, name: str) -> None:
        StoredArtifact.objects.filter(name=checked_name(name)).delete()

    def names(self, prefix: str) -> list[str]:
        return list(StoredArtifact.objects.filter(name__startswith=prefix)
                    .order_by("-written_at", "-pk").values_list("name", flat=True))


def get_store() -> ArtifactStore:
    """The store the settings choose."""
    kind = getattr(settings, "ARTIFACT_STORE", "local")
    if kind == "postgres":
        return PostgresStore()
    if kind == "local":
        return LocalStore(settings.DATA_DIR)
    raise ValueError(f"ARTIFACT_STORE must be one of {', '.join(STORES)}, not {kind!r}")


def put_folder(name: str, folder: str | Path) -> int:
    """Store the files under ``folder`` (a staged upload, say) as one artifact, a zip; its size in bytes."""
    folder, buffer = Path(folder), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                archive.write(path, arcname=path.relative_to(folder).as_posix())
    get_store().write(name, buffer.getvalue())
    return buffer.tell()


def get_folder(name: str, into: str | Path) -> Path:
    """The files stored by :func:`put_folder` as ``name``, written under ``into`` (created, 0700; files 0600).
    An entry that would land outside ``into`` is refused with :class:`ValueError`."""
    into = Path(into)
    into.mkdir(mode=0o700, parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(get_store().read(name))) as archive:
        for entry in archive.infolist():
            parts = PurePosixPath(entry.filename).parts
            if entry.is_dir():
                continue
            if not parts or entry.filename.startswith("/") or ".." in parts or "\\" in entry.filename:
                raise ValueError(f"{name} holds an entry outside its folder: {entry.filename!r}")
            target = into.joinpath(*parts)
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private(target, archive.read(entry))
    return into
