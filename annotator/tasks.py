"""Celery tasks of annotator: importing an upload too large for a web request.

A thin wrapper over :func:`annotator.services.uploads.run_import_job`, which claims the job, reads the staged
files with progress and imports them all or nothing. With ``acks_late`` a worker that dies mid-import leaves
the message to be delivered again; the job, still running, is then imported again from its staged files
(the import is idempotent: a text already in the project is skipped).
"""
from __future__ import annotations

from celery import shared_task
from django.db import transaction

from annotator.models import ImportJob
from annotator.services.uploads import run_import_job


@shared_task(name="annotator.import_upload", acks_late=True)
def import_upload(job_id: int) -> str:
    job = run_import_job(job_id=job_id)
    return job.status if job is not None else "missing"


def enqueue_import(job: ImportJob) -> None:
    """Send a queued import job to the workers once the transaction that created it has committed."""
    transaction.on_commit(lambda: import_upload.delay(job.pk))
