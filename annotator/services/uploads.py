"""Uploaded corpus files staged on disk for the import service: size limits and safe zip extraction."""
from __future__ import annotations

import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Iterator, Sequence

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile


class UploadError(ValueError):
    """An upload that cannot be staged (too big, unsafe archive, nothing sent); nothing was imported."""


def _limit() -> int:
    return settings.DEIDLOOP_MAX_UPLOAD_BYTES


def _safe_name(name: str) -> str:
    base = PurePosixPath(name.replace("\\", "/")).name
    if base in {"", ".", ".."}:
        raise UploadError(f"the upload name {name!r} is not a file name")
    return base


def _extract_zip(archive_path: Path, target: Path, shown: str) -> None:
    try:
        archive = zipfile.ZipFile(archive_path)
    except zipfile.BadZipFile:
        raise UploadError(f"{shown}: not a readable zip archive") from None
    with archive:
        members = [member for member in archive.infolist() if not member.is_dir()]
        total = sum(member.file_size for member in members)
        if total > _limit():
            raise UploadError(
                f"{shown}: unpacks to {total:,} bytes, more than the limit of {_limit():,} bytes"
            )
        for member in members:
            parts = PurePosixPath(member.filename.replace("\\", "/")).parts
            if member.filename.startswith("/") or ".." in parts:
                raise UploadError(f"{shown}: the archive entry {member.filename!r} points outside the archive")
            if parts and parts[0] == "__MACOSX":
                continue
            destination = target.joinpath(*parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, destination.open("wb") as sink:
                shutil.copyfileobj(source, sink)


def _single_top_folder(path: Path) -> Path:
    """An archive holding one folder (``dev/…``) is read as that folder."""
    entries = [entry for entry in path.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return path


@contextmanager
def staged_upload(files: Sequence[UploadedFile]) -> Iterator[Path]:
    """Write the uploaded files (zip archives unpacked) into a temporary folder and yield the path to read."""
    if not files:
        raise UploadError("no file was uploaded")
    total = sum(upload.size or 0 for upload in files)
    if total > _limit():
        raise UploadError(f"the upload is {total:,} bytes, more than the limit of {_limit():,} bytes")
    with tempfile.TemporaryDirectory(prefix="deidloop-upload-") as workdir:
        target = Path(workdir) / "corpus"
        target.mkdir()
        for upload in files:
            name = _safe_name(upload.name or "upload")
            destination = target / name
            with destination.open("wb") as sink:
                for chunk in upload.chunks():
                    sink.write(chunk)
            if name.lower().endswith(".zip"):
                unpacked = Path(workdir) / f"unpacked-{name}"
                unpacked.mkdir()
                _extract_zip(destination, unpacked, name)
                destination.unlink()
                for entry in _single_top_folder(unpacked).iterdir():
                    shutil.move(str(entry), target / entry.name)
        entries = list(target.iterdir())
        yield entries[0] if len(entries) == 1 and entries[0].is_file() else target


def import_uploaded_files(
    *, project, files: Sequence[UploadedFile], fmt: str, evaluation: bool, user, annotated: bool | None = None,
):
    """Stage the uploaded files and import them (see ``annotator.services.imports.import_path``)."""
    from annotator.services.imports import import_path

    with staged_upload(files) as path:
        return import_path(
            project=project, path=path, fmt=fmt, evaluation=evaluation, user=user, annotated=annotated,
        )
