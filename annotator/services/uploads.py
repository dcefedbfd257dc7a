"""Uploaded corpus files staged on disk for the import service: limits, safe zip extraction, text checks.

An upload is planned before anything is written: every archive member's name is normalised (``\\`` read as
``/``) and refused when it is absolute, carries a drive letter, ``..`` or a NUL byte, is a link, or lands on
the same file as another name (compared case-folded); every destination must resolve inside the staging
folder. The limits (bytes sent, bytes unpacked, number of entries, compression ratio) are summed over the
whole request and checked on the archives' directories, before a byte is unpacked. Then the files are
written, each checked to be UTF-8 text without NUL bytes; an encrypted member, a CRC error or a broken
archive stops it. Any problem raises :class:`UploadError` naming the file, and the staging folder is removed:
nothing is imported (the import reads only what staging wrote).

Uploads that unpack to more than ``DEIDLOOP_SYNC_IMPORT_BYTES`` are not imported in the request: they are
kept in the artifact store (``uploads/job-ID/corpus.zip``: a file under ``DATA_DIR``, or rows of PostgreSQL,
which a worker on another host reaches) and an :class:`~annotator.models.ImportJob` is created for a worker
(``annotator.tasks``), which unpacks them into a scratch folder of its own and imports them with progress
(:func:`run_import_job`).
"""
from __future__ import annotations

import codecs
import logging
import lzma
import os
import re
import shutil
import stat
import struct
import tempfile
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Sequence

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotator.artifact_store import ArtifactMissing, get_folder, get_store, put_folder
from annotator.models import ImportJob, Project
from annotator.services.notify import notify_project

log = logging.getLogger(__name__)

#: Below this many unpacked bytes a high compression ratio is harmless (a short, repetitive ``.ann``).
RATIO_FLOOR = 1024 * 1024
_CHUNK = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_ENCRYPTED = 0x1
# What a corrupt compressed stream raises while being read (bz2 raises OSError).
_UNPACK_ERRORS = (zlib.error, lzma.LZMAError, OSError, EOFError, NotImplementedError, RuntimeError)
_SUPPORTED_COMPRESSION = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})


class UploadError(ValueError):
    """An upload that cannot be staged (too big, unsafe archive, not text, nothing sent); nothing was imported."""


@dataclass(frozen=True)
class UploadLimits:
    """What one request may carry, all files and archives together."""

    sent_bytes: int
    unpacked_bytes: int
    entries: int
    ratio: float

    @classmethod
    def from_settings(cls) -> "UploadLimits":
        return cls(
            sent_bytes=settings.DEIDLOOP_MAX_UPLOAD_BYTES,
            unpacked_bytes=settings.DEIDLOOP_MAX_UNPACKED_BYTES,
            entries=settings.DEIDLOOP_MAX_UPLOAD_ENTRIES,
            ratio=settings.DEIDLOOP_MAX_COMPRESSION_RATIO,
        )


@dataclass(frozen=True)
class PlannedFile:
    """One file staging will write: where (relative to the staging folder), how big, and from what."""

    relative: PurePosixPath
    size: int
    shown: str  # the name the uploader knows it by, in messages
    upload: int = 0  # which of the request's files it comes from
    member: zipfile.ZipInfo | None = None  # None: the uploaded file itself, written as it is


@dataclass(frozen=True)
class StagedUpload:
    folder: Path  # the staged files (removed once imported)
    path: Path  # what to read: the folder, or its single file
    files: int
    bytes: int


# --- names -------------------------------------------------------------------------------------------------

def _safe_name(name: str) -> str:
    """The base name of an uploaded file (browsers may send a path)."""
    if "\x00" in name:
        raise UploadError(gettext('the upload name %(name)r contains a NUL byte') % {"name": name})
    base = PurePosixPath(name.replace("\\", "/")).name
    if base in {"", ".", ".."}:
        raise UploadError(gettext('the upload name %(name)r is not a file name') % {"name": name})
    return base


def member_path(name: str, *, archive: str) -> PurePosixPath:
    """The relative path an archive member's ``name`` stands for, or UploadError when it could point
    anywhere but inside the archive's folder, however it is spelt."""
    def refuse(why: str) -> UploadError:
        return UploadError(f"{archive}: the archive entry {name!r} {why}")

    if "\x00" in name:
        raise refuse("contains a NUL byte")
    spelled = name.replace("\\", "/")
    if _DRIVE.match(spelled):
        raise refuse("names a drive; it points outside the archive")
    if spelled.startswith("/"):
        raise refuse("is an absolute path; it points outside the archive")
    path = PurePosixPath(spelled)
    if ".." in path.parts:
        raise refuse("contains '..'; it points outside the archive")
    if not path.parts:
        raise refuse("is not a file name")
    return path


def name_key(path: PurePosixPath) -> str:
    """The same key for every name a file system might treat as the same file (case, Unicode forms)."""
    return unicodedata.normalize("NFKC", path.as_posix()).casefold()


def _skipped(path: PurePosixPath) -> bool:
    """macOS resource forks and hidden files: no reader reads them, so they are not unpacked."""
    return path.parts[0] == "__MACOSX" or any(part.startswith(".") for part in path.parts)


def _file_type(member: zipfile.ZipInfo) -> int:
    return stat.S_IFMT(member.external_attr >> 16)


# --- planning ----------------------------------------------------------------------------------------------

def declared_entries(handle: IO[bytes]) -> int | None:
    """The number of entries an archive's end-of-central-directory record declares (APPNOTE 4.3.16, with the
    ZIP64 record), read before :mod:`zipfile` builds one object per entry; None when it cannot be found."""
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    tail_start = max(0, size - (22 + 0xFFFF))
    handle.seek(tail_start)
    tail = handle.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return None
    entries = struct.unpack("<H", tail[at + 10:at + 12])[0]
    if entries != 0xFFFF:
        return entries
    locator = at - 20
    if locator < 0 or tail[locator:locator + 4] != b"PK\x06\x07":
        return None
    record_offset = struct.unpack("<Q", tail[locator + 8:locator + 16])[0]
    handle.seek(record_offset)
    record = handle.read(56)
    if len(record) < 56 or record[:4] != b"PK\x06\x06":
        return None
    return struct.unpack("<Q", record[32:40])[0]


def plan_archive(
    archive: zipfile.ZipFile, *, shown: str, compressed_bytes: int, limits: UploadLimits, upload: int = 0,
) -> list[PlannedFile]:
    """The files an archive would unpack to, every member checked first (names, type, encryption, size and
    ratio); an archive holding one folder (``dev/…``) is read as that folder."""
    members = archive.infolist()
    if len(members) > limits.entries:
        raise UploadError(gettext('%(shown)s: holds %(length)s entries, more than the limit of %(entries)s') % {"shown": shown, "length": f"{len(members):,}", "entries": f"{limits.entries:,}"})
    planned: list[tuple[PurePosixPath, zipfile.ZipInfo]] = []
    for member in members:
        path = member_path(member.orig_filename, archive=shown)
        kind = _file_type(member)
        if kind == stat.S_IFLNK:
            raise UploadError(gettext('%(shown)s: the archive entry %(orig_filename)r is a symbolic link; links are not accepted') % {"shown": shown, "orig_filename": member.orig_filename})
        is_dir = member.orig_filename.replace("\\", "/").endswith("/") or kind == stat.S_IFDIR
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise UploadError(gettext('%(shown)s: the archive entry %(orig_filename)r is not a regular file') % {"shown": shown, "orig_filename": member.orig_filename})
        if member.flag_bits & _ENCRYPTED:
            raise UploadError(gettext('%(shown)s: the archive entry %(orig_filename)r is encrypted; upload an archive without a password') % {"shown": shown, "orig_filename": member.orig_filename})
        if is_dir or _skipped(path):
            continue
        if member.compress_type not in _SUPPORTED_COMPRESSION:
            raise UploadError(gettext('%(shown)s: the archive entry %(orig_filename)r uses a compression method (%(compress_type)s) that cannot be read; use deflate') % {"shown": shown, "orig_filename": member.orig_filename, "compress_type": member.compress_type})
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > RATIO_FLOOR and ratio > limits.ratio:
            raise UploadError(
                gettext('%(shown)s: the archive entry %(orig_filename)r unpacks %(ratio)s times its packed size (%(file_size)s bytes), more than the limit of %(ratio2)s') % {"shown": shown, "orig_filename": member.orig_filename, "ratio": f"{ratio:,.0f}", "file_size": f"{member.file_size:,}", "ratio2": f"{limits.ratio:,.0f}"}
            )
        planned.append((path, member))
    if planned and all(len(path.parts) > 1 for path, _ in planned) and len({path.parts[0] for path, _ in planned}) == 1:
        planned = [(PurePosixPath(*path.parts[1:]), member) for path, member in planned]
    unpacked = sum(member.file_size for _, member in planned)
    if unpacked > RATIO_FLOOR and unpacked > limits.ratio * max(compressed_bytes, 1):
        raise UploadError(
            gettext('%(shown)s: unpacks to %(unpacked)s bytes, %(value)s times its size, more than the limit of %(ratio)s') % {"shown": shown, "unpacked": f"{unpacked:,}", "value": f"{unpacked / max(compressed_bytes, 1):,.0f}", "ratio": f"{limits.ratio:,.0f}"}
        )
    return [
        PlannedFile(relative=path, size=member.file_size, shown=f"{shown}: {member.orig_filename}",
                    upload=upload, member=member)
        for path, member in planned
    ]


def check_plan(planned: Sequence[PlannedFile], *, target: Path, entries: int, limits: UploadLimits) -> int:
    """Request-wide checks of what staging would write: the number of entries, the bytes unpacked, every
    destination distinct (case-folded, no file where another needs a folder) and resolving inside ``target``.
    Returns the bytes to be written."""
    if entries > limits.entries:
        raise UploadError(gettext('the upload holds %(entries)s entries, more than the limit of %(entries2)s') % {"entries": f"{entries:,}", "entries2": f"{limits.entries:,}"})
    total = sum(item.size for item in planned)
    if total > limits.unpacked_bytes:
        raise UploadError(
            gettext('the upload unpacks to %(total)s bytes, more than the limit of %(unpacked_bytes)s bytes') % {"total": f"{total:,}", "unpacked_bytes": f"{limits.unpacked_bytes:,}"}
        )
    root = target.resolve()
    files: dict[str, PlannedFile] = {}
    folders: dict[str, PlannedFile] = {}
    for item in planned:
        key = name_key(item.relative)
        if key in files:
            raise UploadError(gettext('%(shown)s: the same file as %(shown2)s; names must differ (letter case aside)') % {"shown": item.shown, "shown2": files[key].shown})
        if key in folders:
            raise UploadError(gettext('%(shown)s: a file where %(shown2)s needs a folder') % {"shown": item.shown, "shown2": folders[key].shown})
        files[key] = item
        for parent in list(item.relative.parents)[:-1]:
            parent_key = name_key(parent)
            if parent_key in files:
                raise UploadError(gettext('%(shown)s: a file where %(shown2)s needs a folder') % {"shown": files[parent_key].shown, "shown2": item.shown})
            folders.setdefault(parent_key, item)
        if not (target / item.relative).resolve().is_relative_to(root):
            raise UploadError(gettext('%(shown)s: points outside the archive') % {"shown": item.shown})
    return total


def _too_many_entries(name: str, own: int, total: int, limit: int) -> str:
    values = {"name": name, "own": f"{own:,}", "total": f"{total:,}", "limit": f"{limit:,}"}
    if own == total:
        return gettext("%(name)s: holds %(own)s entries, more than the limit of %(limit)s") % values
    return gettext("%(name)s: holds %(own)s entries, which bring the upload to %(total)s, more than the limit of "
                   "%(limit)s") % values


def plan_upload(files: Sequence[UploadedFile], *, target: Path, limits: UploadLimits) -> tuple[list[PlannedFile], int]:
    """Every file the upload would stage, and their bytes; UploadError before anything is written."""
    if not files:
        raise UploadError(gettext("no file was uploaded"))
    sent = sum(upload.size or 0 for upload in files)
    if sent > limits.sent_bytes:
        raise UploadError(gettext('the upload is %(sent)s bytes, more than the limit of %(sent_bytes)s bytes') % {"sent": f"{sent:,}", "sent_bytes": f"{limits.sent_bytes:,}"})
    planned: list[PlannedFile] = []
    entries = 0
    for index, upload in enumerate(files):
        name = _safe_name(upload.name or "upload")
        if not name.lower().endswith(".zip"):
            entries += 1
            planned.append(PlannedFile(relative=PurePosixPath(name), size=upload.size or 0, shown=name, upload=index))
            continue
        handle = upload.file
        try:
            declared = declared_entries(handle)
        except (OSError, struct.error):
            declared = None
        if declared is not None and entries + declared > limits.entries:
            raise UploadError(_too_many_entries(name, declared, entries + declared, limits.entries))
        handle.seek(0)
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
            raise UploadError(gettext('%(name)s: not a readable zip archive') % {"name": name}) from None
        with archive:
            if entries + len(archive.infolist()) > limits.entries:
                raise UploadError(_too_many_entries(
                    name, len(archive.infolist()), entries + len(archive.infolist()), limits.entries,
                ))
            entries += len(archive.infolist())
            planned.extend(plan_archive(
                archive, shown=name, compressed_bytes=upload.size or 0, limits=limits, upload=index,
            ))
    total = check_plan(planned, target=target, entries=entries, limits=limits)
    if total > RATIO_FLOOR and total > limits.ratio * max(sent, 1):
        raise UploadError(
            gettext('the upload unpacks to %(total)s bytes, %(value)s times its size, more than the limit of %(ratio)s') % {"total": f"{total:,}", "value": f"{total / max(sent, 1):,.0f}", "ratio": f"{limits.ratio:,.0f}"}
        )
    return planned, total


# --- writing -----------------------------------------------------------------------------------------------

class TextCheck:
    """Fed a file's bytes in chunks: UploadError at the first NUL byte or byte that is not UTF-8."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.line = 1
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def _refuse(self, line: int) -> UploadError:
        return UploadError(f"{self.shown}, line {line}: is not UTF-8 text (binary file?)")

    def feed(self, chunk: bytes, *, final: bool = False) -> None:
        nul = chunk.find(b"\x00")
        pending = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(chunk, final)
        except UnicodeDecodeError as error:
            bad = max(0, error.start - pending)
            raise self._refuse(self.line + chunk.count(b"\n", 0, bad if nul < 0 else min(bad, nul))) from None
        if nul >= 0:
            raise self._refuse(self.line + chunk.count(b"\n", 0, nul))
        self.line += chunk.count(b"\n")


def _write_file(source: IO[bytes], destination: Path, item: PlannedFile) -> int:
    check = TextCheck(item.shown)
    written = 0
    # O_EXCL and O_NOFOLLOW: never through a link, never over a file already written.
    descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as sink:
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            if written > item.size:
                raise UploadError(gettext('%(shown)s: holds more bytes than its archive entry declares') % {"shown": item.shown})
            check.feed(chunk)
            sink.write(chunk)
    check.feed(b"", final=True)
    return written


def _make_folders(target: Path, relative: PurePosixPath) -> Path:
    folder = target
    for part in relative.parts[:-1]:
        folder = folder / part
        if not folder.is_dir():
            folder.mkdir(mode=0o700)
    return folder / relative.name


def write_plan(files: Sequence[UploadedFile], planned: Sequence[PlannedFile], *, target: Path) -> None:
    """Write the planned files under ``target`` (created, 0700; files 0600), checking each is UTF-8 text."""
    target.mkdir(mode=0o700)
    archives: dict[int, zipfile.ZipFile] = {}
    try:
        for item in planned:
            destination = _make_folders(target, item.relative)
            handle = files[item.upload].file
            if item.member is None:
                handle.seek(0)
                _write_file(handle, destination, item)
                continue
            if item.upload not in archives:
                handle.seek(0)
                archives[item.upload] = zipfile.ZipFile(handle)
            try:
                with archives[item.upload].open(item.member) as source:
                    _write_file(source, destination, item)
            except zipfile.BadZipFile as error:  # a bad CRC-32 among them
                raise UploadError(gettext('%(shown)s: the archive is damaged (%(error)s)') % {"shown": item.shown, "error": error}) from None
            except _UNPACK_ERRORS as error:
                raise UploadError(gettext('%(shown)s: cannot be unpacked, the archive is damaged (%(error)s)') % {"shown": item.shown, "error": error}) from None
    finally:
        for archive in archives.values():
            archive.close()


def _read_target(folder: Path) -> Path:
    entries = list(folder.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_file() else folder


def stage_upload(files: Sequence[UploadedFile], *, into: Path, limits: UploadLimits | None = None) -> StagedUpload:
    """Check the upload, then write it into the new folder ``into``; on any problem ``into`` is removed."""
    limits = limits or UploadLimits.from_settings()
    planned, total = plan_upload(files, target=into, limits=limits)
    try:
        write_plan(files, planned, target=into)
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return StagedUpload(folder=into, path=_read_target(into), files=len(planned), bytes=total)


def uploads_root() -> Path:
    """``DATA_DIR/uploads``, readable by the server's user only."""
    root = Path(settings.DATA_DIR) / "uploads"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


# --- importing ---------------------------------------------------------------------------------------------

def import_uploaded_files(
    *, project: Project, files: Sequence[UploadedFile], fmt: str, evaluation: bool, user,
    annotated: bool | None = None, evaluation_share: float = 0.0,
):
    """Stage the uploaded files and import them (see ``annotator.services.imports.import_path``).

    Returns the import's report; or, when the upload unpacks to more than ``DEIDLOOP_SYNC_IMPORT_BYTES``,
    a queued :class:`ImportJob` holding the staged files, for the caller to hand to a worker.
    """
    from annotator.services.imports import FORMATS, import_path

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    root = uploads_root()
    workdir = Path(tempfile.mkdtemp(prefix="staging-", dir=root))
    kept = False
    try:
        staged = stage_upload(files, into=workdir / "corpus")
        if staged.bytes <= settings.DEIDLOOP_SYNC_IMPORT_BYTES:
            return import_path(
                project=project, path=staged.path, fmt=fmt, evaluation=evaluation, user=user, annotated=annotated,
                evaluation_share=evaluation_share,
            )
        job = queue_staged_import(
            project=project, workdir=workdir, staged=staged, fmt=fmt, evaluation=evaluation, user=user,
            annotated=annotated, evaluation_share=evaluation_share,
            filenames=[upload.name or "upload" for upload in files],
        )
        kept = True
        return job
    finally:
        if not kept:
            shutil.rmtree(workdir, ignore_errors=True)


def queue_staged_import(
    *, project: Project, workdir: Path, staged: StagedUpload, fmt: str, evaluation: bool, user,
    annotated: bool | None, evaluation_share: float, filenames: Sequence[str],
) -> ImportJob:
    """An :class:`ImportJob` for files staged under ``workdir/corpus``: they are kept in the artifact store
    (``uploads/job-ID/corpus.zip``), where a worker on any host reads them, and ``workdir`` is removed; on any
    problem nothing is queued."""
    try:
        with transaction.atomic():
            job = ImportJob.objects.create(
                project=project, created_by=user if getattr(user, "is_authenticated", False) else None,
                format=fmt, evaluation=evaluation, evaluation_share=evaluation_share,
                unannotated=annotated is False, filenames=list(filenames),
                total_bytes=staged.bytes, total_files=staged.files,
            )
            job.staged_path = _staged_name(job.pk)
            put_folder(job.staged_path, workdir / "corpus")
            job.save(update_fields=["staged_path"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return job


def _staged_name(job_id: int) -> str:
    return f"uploads/job-{job_id}/corpus.zip"


def run_import_job(*, job_id: int) -> ImportJob | None:
    """Import a queued job's staged files, recording progress (files read), then the report or the error;
    the staged folder is removed either way. Running it again for a finished job does nothing, and a job
    left running by a dead worker is imported again (the import is all or nothing, and idempotent)."""
    from annotator.access import USER_INPUT_ERRORS
    from annotator.services.imports import import_documents, read_path

    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ).update(status=ImportJob.Status.RUNNING, done_files=0)
    job = ImportJob.objects.select_related("project", "created_by").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    staged = job.staged_path if job.staged_path == _staged_name(job.pk) else None
    scratch = Path(tempfile.mkdtemp(prefix=f"job-{job_id}-", dir=uploads_root()))

    def progress(done: int, total: int) -> None:
        ImportJob.objects.filter(pk=job_id).update(done_files=done, total_files=total)
        _announce(job, status=ImportJob.Status.RUNNING, done=done, total=total)

    def clean_up() -> None:
        if staged is not None:
            get_store().delete(staged)
        shutil.rmtree(scratch, ignore_errors=True)

    try:
        try:
            if staged is None:
                raise ArtifactMissing("no staged upload")
            get_folder(staged, scratch / "corpus")
        except ArtifactMissing:
            raise UploadError(gettext("the staged upload is gone; upload the files again")) from None
        path = _read_target(scratch / "corpus")
        documents, annotated = read_path(
            path=path, fmt=job.format, annotated=False if job.unannotated else None, progress=progress,
        )
        report = import_documents(
            project=job.project, documents=documents, annotated=annotated, evaluation=job.evaluation,
            user=job.created_by, source=f"{job.format}:{path.name}", evaluation_share=job.evaluation_share,
        )
    except USER_INPUT_ERRORS as error:
        outcome = {"status": ImportJob.Status.FAILED, "error": str(error)}
    except Exception:
        log.exception("import job %s failed", job_id)
        clean_up()
        _finish(job_id, status=ImportJob.Status.FAILED, error="the import failed on the server; nothing was imported")
        raise
    else:
        outcome = {"status": ImportJob.Status.DONE, "report": report.as_dict()}
    finally:
        clean_up()
    _finish(job_id, **outcome)  # once the staged files are gone: a finished job holds none
    return ImportJob.objects.get(pk=job_id)


def _finish(job_id: int, *, status: str, error: str = "", report: dict | None = None) -> None:
    ImportJob.objects.filter(pk=job_id).update(
        status=status, error=error, report=report or {}, finished_at=timezone.now(), staged_path="",
    )
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is not None:
        _announce(job, status=status, done=job.done_files, total=job.total_files)


def _announce(job: ImportJob, *, status: str, done: int, total: int) -> None:
    """The job's progress to the project's leads on its websocket (the job page shows it; no notice text)."""
    notify_project(project_id=job.project_id, kind="import_progress", text="", leads_only=True,
                   data={"job_id": job.pk, "status": status, "done": done, "total": total})
