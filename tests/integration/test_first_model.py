"""``./deidloop up`` queues the first model of every project that has gold and none (``retrain --all
--if-no-model --queue``) for the workers instead of training before it serves; meanwhile the project's pages
say that the first model is training."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.services.imports import import_documents
from corpus.synthetic import generate_notes
from learning.models import ModelVersion, RetrainJob
from learning.services import jobs

pytestmark = pytest.mark.django_db

TRAINING = "First model training"


def queue_first_models(callbacks_fixture) -> tuple[str, list]:
    out = io.StringIO()
    with callbacks_fixture(execute=False) as callbacks:
        call_command("retrain", all=True, if_no_model=True, queue=True, stdout=out)
    return out.getvalue(), callbacks


def test_the_first_model_is_queued_for_the_workers_and_shown_training(
    projects, users, client, django_capture_on_commit_callbacks
):
    project = projects["A"]  # B has no gold: nothing to train on
    notes = generate_notes(12, seed=3)
    import_documents(project=project, documents=notes[:5], annotated=True)
    import_documents(project=project, documents=notes[5:], annotated=False)

    output, callbacks = queue_first_models(django_capture_on_commit_callbacks)
    job = RetrainJob.objects.get()
    assert (job.project_id, job.status, job.reason) == (project.pk, "queued", "command")
    assert output == f"A: first model queued (retrain #{job.pk}); the workers train it\n"
    assert len(callbacks) == 1  # the message to the workers, sent once the job is committed
    assert not ModelVersion.objects.exists()  # nothing was trained in the command

    # A second start before a worker got to it queues nothing more (and asks for no follow-up).
    output, callbacks = queue_first_models(django_capture_on_commit_callbacks)
    assert (output, callbacks, RetrainJob.objects.count()) == ("", [], 1)
    job.refresh_from_db()
    assert job.follow_up is False

    client.force_login(users["lead"])
    loop_page = client.get(reverse("learning:loop", args=[project.pk])).content.decode()
    assert TRAINING in loop_page and "No model yet" not in loop_page
    assert TRAINING in client.get(reverse("annotator:project-detail", args=[project.pk])).content.decode()
    client.force_login(users["annotator"])
    assert TRAINING in client.get(reverse("annotator:project-detail", args=[project.pk])).content.decode()

    # Once the retrain has ended (here: failed), the pages no longer say it is training.
    assert jobs.fail(job.pk, job.attempt, "broken on purpose")
    assert TRAINING not in client.get(reverse("annotator:project-detail", args=[project.pk])).content.decode()
    client.force_login(users["lead"])
    assert "No model yet" in client.get(reverse("learning:loop", args=[project.pk])).content.decode()


def test_queue_is_for_first_models_only(projects):
    with pytest.raises(CommandError, match="--queue queues first models only"):
        call_command("retrain", all=True, queue=True)
