"""The loop listens to the workbench: a submission may complete a batch, which queues a retrain."""
from __future__ import annotations

import logging

from django.dispatch import receiver

from annotator.models import Project
from annotator.signals import annotation_submitted
from learning.services import jobs
from learning.models import RetrainJob

log = logging.getLogger(__name__)


@receiver(annotation_submitted)
def queue_retrain_after_batch(sender, annotation, **kwargs) -> None:
    """Queue a retrain when ``batch size`` submissions arrived since the last one was asked for.

    Runs after the submission committed; a broker that cannot be reached must not undo or fail the
    submission, so errors are logged (the next submission, or the lead's button, asks again).
    """
    from learning.tasks import enqueue, recover_jobs

    if annotation.document.role != "pool":
        return
    try:
        project = Project.objects.get(pk=annotation.document.project_id)
        job, created = jobs.request_retrain(project=project, reason=RetrainJob.Reason.BATCH)
        if created:
            enqueue(job)
        elif job is not None and job.pk in jobs.stalled_jobs():
            recover_jobs.delay()
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("could not queue a retrain after submission %s", annotation.pk)
