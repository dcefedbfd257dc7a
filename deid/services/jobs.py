"""De-identification jobs: text or files too large for a web request, de-identified by a worker.

The input is staged (checked like any upload: ``annotator.services.uploads``) and kept in the artifact store
as ``deid/job-ID/input.zip`` (``annotator.artifact_store``: a file under ``DATA_DIR``, or a row of PostgreSQL
when workers run on other hosts); the worker (``deid.tasks``) unpacks it into a private scratch folder of its
own, streams it through :func:`deid.services.deidentify.deidentify_path`, recording progress (bytes read,
documents done), stores the output with its report as ``deid/job-ID/result.zip`` and removes the input.
Running a job again redoes it from its input; a finished job is left alone.
"""
from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO, Sequence

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotator.artifact_store import ArtifactMissing, get_folder, get_store, put_folder
from annotator.models import AuditEvent, Project
from annotator.services.audit import record_event
from annotator.services.uploads import UploadError, stage_upload
from corpus.private_files import write_private
from deid.models import DeidJob
from deid.services.deidentify import deidentify_path, input_form
from deid.services.policy import DeidError

log = logging.getLogger(__name__)
RESULT_NAME = "result.zip"


def jobs_root() -> Path:
    """``DATA_DIR/deid``, this host's scratch space for jobs, readable by the server's user only."""
    root = Path(settings.DATA_DIR) / "deid"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def _input_name(job_id: int) -> str:
    return f"deid/job-{job_id}/input.zip"


def _result_name(job_id: int) -> str:
    return f"deid/job-{job_id}/{RESULT_NAME}"


def open_result(job: DeidJob) -> BinaryIO | None:
    """The job's download (a zip), once it is done."""
    if job.status != DeidJob.Status.DONE:
        return None
    try:
        return get_store().open(_result_name(job.pk))
    except ArtifactMissing:
        return None


def create_job(
    *, project: Project, user, policy: str, recall_bias: float | None = None,
    files: Sequence[UploadedFile] = (), text: str = "",
) -> DeidJob:
    """Stage the text (as ``text.txt``) or the uploaded files and queue a job for them (the caller sends it to
    the workers once committed: ``deid.tasks.enqueue_deidentify``)."""
    workdir = Path(tempfile.mkdtemp(prefix="staging-", dir=jobs_root()))
    try:
        if files:
            staged = stage_upload(files, into=workdir / "input")
            total, names = staged.bytes, [upload.name or "upload" for upload in files]
        else:
            (workdir / "input").mkdir(mode=0o700)
            data = text.encode("utf-8")
            write_private(workdir / "input" / "text.txt", data)
            total, names = len(data), ["text.txt"]
        input_form(_input_path(workdir / "input"))  # refuse what cannot be read before anything is queued
        with transaction.atomic():
            job = DeidJob.objects.create(
                project=project, created_by=user if getattr(user, "is_authenticated", False) else None,
                policy=policy, recall_bias=recall_bias, filenames=names, total_bytes=total,
            )
            get_store().delete(_result_name(job.pk))  # left by a database the store outlived
            put_folder(_input_name(job.pk), workdir / "input")
        return job
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _input_path(folder: Path) -> Path:
    """What to read in a staged input: its single file or folder, else the folder itself."""
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 else folder


def _output_name(job: DeidJob, source: Path, staged: Path) -> str:
    """The output's name: the input's (a file, or a folder in the upload), else the upload's ("notes.zip" →
    "notes"), else "deidentified"."""
    if source != staged:
        return source.name
    return Path(job.filenames[0]).stem if len(job.filenames) == 1 else "deidentified"


def run_job(*, job_id: int) -> DeidJob | None:
    """De-identify a queued job's input with progress; then the report and the download, or the error."""
    claimed = DeidJob.objects.filter(
        pk=job_id, status__in=[DeidJob.Status.QUEUED, DeidJob.Status.RUNNING]
    ).update(status=DeidJob.Status.RUNNING, done_bytes=0, done_documents=0)
    job = DeidJob.objects.select_related("project", "created_by").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    scratch = Path(tempfile.mkdtemp(prefix=f"job-{job_id}-", dir=jobs_root()))
    staged, output = scratch / "input", scratch / "output"

    def progress(done: int, total: int, documents: int) -> None:
        DeidJob.objects.filter(pk=job_id).update(done_bytes=done, total_bytes=total, done_documents=documents)

    try:
        try:
            try:
                get_folder(_input_name(job_id), staged)
            except ArtifactMissing:
                raise DeidError("the staged input is gone; send the text again") from None
            get_store().delete(_result_name(job_id))
            output.mkdir(mode=0o700)
            source = _input_path(staged)
            target = output / _output_name(job, source, staged)
            report = deidentify_path(project=job.project, source=source, out=target, policy=job.policy,
                                     recall_bias=job.recall_bias, user=job.created_by, progress=progress)
            put_folder(_result_name(job_id), output)
        finally:
            # The input and the working copies are gone before the job reads as ended, not just after.
            get_store().delete(_input_name(job_id))
            shutil.rmtree(scratch, ignore_errors=True)
    except (DeidError, UploadError) as error:
        _finish(job_id, status=DeidJob.Status.FAILED, error=str(error))
    except Exception:
        log.exception("de-identification job %s failed", job_id)
        _finish(job_id, status=DeidJob.Status.FAILED, error="the de-identification failed on the server")
        raise
    else:
        _finish(job_id, status=DeidJob.Status.DONE, report=report)
    return DeidJob.objects.get(pk=job_id)


def _finish(job_id: int, *, status: str, error: str = "", report: dict | None = None) -> None:
    DeidJob.objects.filter(pk=job_id).update(status=status, error=error, report=report or {},
                                             finished_at=timezone.now())


def record_download(*, job: DeidJob, user, request=None) -> None:
    """A download of a job's de-identified text is an export."""
    record_event(user=user, action=AuditEvent.Action.EXPORT, project=job.project, obj=job, request=request,
                 detail={"deidentified_job": job.pk, "documents": job.report.get("documents", 0),
                         "policy": job.policy})

