"""Celery tasks of deid: de-identifying text, and exporting, when too large for a web request.

Thin wrappers over :func:`deid.services.jobs.run_job` and :func:`deid.services.export_jobs.run_export_job`.
With ``acks_late`` a worker that dies mid-run leaves the message to be delivered again; the job, still
running, is then redone (from its staged input; an export from the gold standard).
"""
from __future__ import annotations

from celery import shared_task
from django.db import transaction

from deid.models import DeidJob
from deid.services.export_jobs import ExportJob, run_export_job
from deid.services.jobs import run_job


@shared_task(name="deid.deidentify", acks_late=True)
def deidentify(job_id: int) -> str:
    job = run_job(job_id=job_id)
    return job.status if job is not None else "missing"


def enqueue_deidentify(job: DeidJob) -> None:
    """Send a queued job to the workers once the transaction that created it has committed."""
    transaction.on_commit(lambda: deidentify.delay(job.pk))


@shared_task(name="deid.export", acks_late=True)
def export(project_id: int, token: str) -> str:
    job = run_export_job(project_id=project_id, token=token)
    return job.status if job is not None else "missing"


def enqueue_export(job: ExportJob) -> None:
    """Send a queued export to the workers once the transaction that asked for it has committed."""
    transaction.on_commit(lambda: export.delay(job.project_id, job.token))
