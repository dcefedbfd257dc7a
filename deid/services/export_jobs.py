"""An export too large for a web request, made by a worker with its progress shown.

An export of more than ``DEIDLOOP_SYNC_EXPORT_RECORDS`` records is a job: its state (``state.json``) and,
once made, its archive live in the artifact store under ``exports/PROJECT/TOKEN/``, so the web server and a
worker on any host see the same (``annotator.artifact_store``). The worker (``deid.tasks.export``) makes the
archive with :func:`deid.services.exports.export_archive` — audited as an export there, as a request's is —
records its progress and pushes it to the project's leads over their websocket (``export_progress``
notices, no text). The lead who asked downloads it; the download is audited too. Below the threshold an
export is made in the request.
"""
from __future__ import annotations

import json
import re
import secrets
from collections.abc import Collection
from dataclasses import asdict, dataclass

from django.conf import settings
from django.contrib.auth import get_user_model

from annotator.artifact_store import ArtifactMissing, get_store
from annotator.models import AuditEvent, Project
from annotator.services.audit import record_event
from annotator.services.notify import notify_project
from corpus.formats.errors import FormatError
from deid.selectors.export import gold_by_status
from deid.services.exports import export_archive
from deid.services.policy import DeidError

_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


class ExportJobMissing(LookupError):
    """No such export job in this project (never made, or not the asker's)."""


@dataclass
class ExportJob:
    token: str
    project_id: int
    user_id: int
    format: str
    conceal: str
    include_evaluation: bool
    statuses: list[str]
    total: int  # records to export
    status: str = "queued"  # queued, running, done, failed
    done: int = 0
    filename: str = ""
    error: str = ""

    @property
    def percent(self) -> int:
        if self.status == "done":
            return 100
        return min(100, round(100 * self.done / self.total)) if self.total else 0

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")


def _folder(project_id: int, token: str) -> str:
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise ExportJobMissing(token)
    return f"exports/{int(project_id)}/{token}"


def _save(job: ExportJob) -> None:
    get_store().write(f"{_folder(job.project_id, job.token)}/state.json", json.dumps(asdict(job)).encode())


def _load(project_id: int, token: str) -> ExportJob:
    try:
        state = json.loads(get_store().read(f"{_folder(project_id, token)}/state.json"))
    except (ArtifactMissing, ValueError):
        raise ExportJobMissing(token) from None
    return ExportJob(**state)


def records_to_export(*, project: Project, include_evaluation: bool, statuses: Collection[str]) -> int:
    return sum(row["count"] - (0 if include_evaluation else row["evaluation"])
               for row in gold_by_status(project=project) if row["status"] in statuses)


def is_long_export(*, project: Project, include_evaluation: bool, statuses: Collection[str]) -> bool:
    """Whether this export is made by a worker rather than in the request."""
    records = records_to_export(project=project, include_evaluation=include_evaluation, statuses=statuses)
    return records > settings.DEIDLOOP_SYNC_EXPORT_RECORDS


def new_token() -> str:
    """An export job's token, which names its folder in the artifact store: hexadecimal, as a store name may
    not start with "-" (a URL-safe token did, one time in 64)."""
    return secrets.token_hex(24)


def start_export_job(
    *, project: Project, user, fmt: str, conceal: str, include_evaluation: bool, statuses: Collection[str],
) -> ExportJob:
    """A queued export job (hand it to a worker with ``deid.tasks.enqueue_export``)."""
    job = ExportJob(
        token=new_token(), project_id=project.pk, user_id=user.pk, format=fmt, conceal=conceal,
        include_evaluation=include_evaluation, statuses=sorted(statuses),
        total=records_to_export(project=project, include_evaluation=include_evaluation, statuses=statuses),
    )
    _save(job)
    return job


def export_job(*, project: Project, token: str, user) -> ExportJob:
    """The lead's export job in the project; ``ExportJobMissing`` for anyone else's."""
    job = _load(project.pk, token)
    if job.user_id != user.pk:
        raise ExportJobMissing(token)
    return job


def _announce(job: ExportJob) -> None:
    notify_project(project_id=job.project_id, kind="export_progress", text="", leads_only=True,
                   data={"job_id": job.token, "status": job.status, "done": job.done, "total": job.total})


def run_export_job(*, project_id: int, token: str) -> ExportJob | None:
    """Make the job's archive, recording progress; a finished job is left as it is (the task may run twice)."""
    try:
        job = _load(project_id, token)
    except ExportJobMissing:
        return None
    if job.finished:
        return job
    project = Project.objects.filter(pk=project_id).first()
    user = get_user_model().objects.filter(pk=job.user_id).first()
    if project is None:
        return None
    job.status, job.done = "running", 0
    _save(job)
    _announce(job)

    def progress(done: int, total: int) -> None:
        job.done, job.total = done, total
        _save(job)
        _announce(job)

    try:
        content, filename = export_archive(
            project=project, fmt=job.format, conceal=job.conceal, user=user,
            include_evaluation=job.include_evaluation, statuses=job.statuses, progress=progress,
        )
    except (DeidError, FormatError) as error:
        job.status, job.error = "failed", str(error)
    except Exception:
        job.status, job.error = "failed", "the export failed on the server; try again"
        _save(job)
        _announce(job)
        raise
    else:
        get_store().write(f"{_folder(project_id, token)}/{filename}", content)
        job.status, job.filename, job.done = "done", filename, job.total
    _save(job)
    _announce(job)
    return job


def open_export_result(*, project: Project, job: ExportJob, user, request=None):
    """The finished job's archive, opened for a download, which is audited as an export; None before."""
    if job.status != "done":
        return None
    handle = get_store().open(f"{_folder(job.project_id, job.token)}/{job.filename}")
    record_event(user=user, action=AuditEvent.Action.EXPORT, project=project, request=request,
                 detail={"download": job.filename, "export_job": job.token, "format": job.format,
                         "conceal": job.conceal, "include_evaluation": job.include_evaluation,
                         "statuses": job.statuses})
    return handle
