"""The loop listens to the workbench: a submission may complete a batch, which queues a retrain; a record
handed out gets its suggestions completed from its own text."""
from __future__ import annotations

import logging

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils.translation import gettext

from annotator.models import Project
from annotator.signals import annotation_submitted, project_page_note, record_agreement, suggestion_completion
from annotator.signals import label_renamed, label_usage
from learning.services import jobs, model_store
from learning.models import ModelVersion, RetrainJob
from learning.selectors.loop import retrain_active

log = logging.getLogger(__name__)


@receiver(annotation_submitted)
def queue_retrain_after_batch(sender, annotation, **kwargs) -> None:
    """Queue a retrain when ``batch size`` submissions arrived since the last one was asked for.

    Runs after the submission committed; a broker that cannot be reached must not undo or fail the
    submission, so errors are logged (the next submission, or the lead's button, asks again). A stalled
    job's recovery is sent at most once per job every ``RECOVERY_WINDOW_SECONDS``.
    """
    from learning.tasks import enqueue, recover_jobs

    if annotation.document.role != "pool":
        return
    try:
        job, created = jobs.request_retrain(project=annotation.document.project, reason=RetrainJob.Reason.BATCH)
        if created:
            enqueue(job)
        elif job is not None and jobs.is_stalled(job) and _first_recovery_in_window(job.pk):
            recover_jobs.delay()
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("could not queue a retrain after submission %s", annotation.pk)


#: While a job's worker is dead, every submission finds the job stalled; one recovery message per job per
#: window is enough (every worker also sends ``recover_jobs`` once a minute).
RECOVERY_WINDOW_SECONDS = 30


def _first_recovery_in_window(job_id: int) -> bool:
    """True for the first caller per job and window: ``cache.add`` on Redis is atomic across processes. The
    key names the database, as deployments (and test runs) may share one Redis."""
    key = f"deidloop:recover_jobs:{connection.settings_dict['NAME']}:{job_id}"
    return cache.add(key, 1, RECOVERY_WINDOW_SECONDS)


@receiver(project_page_note)
def first_model_training(sender, project, **kwargs) -> str | None:
    """While a project's first model trains (``./deidloop up`` queues it at first start), its page says why
    records come without suggestions."""
    if ModelVersion.objects.filter(project=project, is_current=True).exists():
        return None
    if not retrain_active(project_id=project.pk):
        return None
    return gettext("First model training: until it is ready, records are handed out in random order, without "
                   "suggestions.")


@receiver(suggestion_completion)
def complete_from_the_record(sender, project, **kwargs):
    """Every mention of a string the model tagged, and structured PHI a sure pattern finds, in the record's
    suggestions (``learning.core.pre_annotation.complete_suggestions``)."""
    from learning.services.completion import completer

    return completer(project)


@receiver(record_agreement)
def agreement_of_records(sender, project, records, **kwargs) -> dict[int, dict]:
    """Each double-annotated record's own agreement figures (``learning.core.agreement``), for the record list."""
    from learning.core.agreement import RecordSubmissions, agreement

    figures = agreement([RecordSubmissions(record["text"], record["spans"]) for record in records],
                        labels=project.labels or None)
    kept = [record for record in records if len(record["spans"]) >= 2]
    return {record["id"]: own for record, own in zip(kept, figures["per_record"])}


@receiver(label_usage)
def silver_spans_of_label(sender, project, label, **kwargs) -> tuple[int, set[int]]:
    from learning.services.labels import silver_label_usage

    return silver_label_usage(project=project, label=label)


@receiver(label_renamed)
def rename_in_silver_and_retrain(sender, project, old, new, user=None, **kwargs) -> tuple[int, set[int]]:
    """Silver spans follow a renamed label; a project with a model asks for a retrain once the rename commits,
    as the current model still suggests the old name (a broker out of reach is logged: the rename stands)."""
    from django.db import transaction

    from learning.services.labels import has_current_model, rename_silver_label
    from learning.tasks import request_lead_retrain

    def retrain() -> None:
        try:
            request_lead_retrain(project=project, user=user)
        except Exception:  # noqa: BLE001 - see the docstring
            log.exception("could not queue a retrain after renaming %s to %s in project %s", old, new, project.pk)

    changed = rename_silver_label(project=project, old=old, new=new)
    if has_current_model(project=project):
        transaction.on_commit(retrain)
    return changed


@receiver(post_delete, sender=ModelVersion)
def _delete_model_file(sender, instance: ModelVersion, **kwargs) -> None:
    """A model version deleted (with its project, say) takes its saved model with it."""
    artifact = instance.artifact
    if artifact:
        transaction.on_commit(lambda: model_store.delete(artifact))


@receiver(post_delete, sender=Project)
def _delete_project_bases(sender, instance: Project, **kwargs) -> None:
    """A deleted project's bases, waiting for a retrain that will not come, go with it."""
    project_id = instance.pk
    transaction.on_commit(lambda: [model_store.delete(name) for name in model_store.base_models(project_id)])
