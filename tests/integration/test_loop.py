"""The active-learning loop with a real Celery worker on the embedded Redis and PostgreSQL: a batch of
submissions through the API retrains the model, re-ranks the pool and changes what is handed out next;
killing the worker mid-retrain loses and duplicates nothing."""
from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from asgiref.sync import async_to_sync

from annotator.models import Document, PoolScore, Ranking
from annotator.services.imports import import_documents
from annotator.services.notify import project_group
from corpus.synthetic import generate_notes
from learning.models import ModelVersion, RetrainJob, StoredFeatures
from learning.services.completion import COMPLETED_BEFORE_PUBLISHING, completion_mark
from learning.services.retrain import train_and_rank
from tests.integration.celery_worker import Worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_factory(tmp_path, settings):
    # The local artifact store: the worker reads the models this process trains from the folder both share.
    settings.DATA_DIR = tmp_path / "data"
    workers = []

    def start(processes: int = 1) -> Worker:
        worker = Worker(queue=_queue(), data_dir=tmp_path / "data", log_path=tmp_path / "worker.log",
                        processes=processes).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def _queue() -> str:
    from django.conf import settings

    return settings.CELERY_TASK_DEFAULT_QUEUE


@pytest.fixture
def loop_project(projects):
    """Project A: 12 gold pool notes, 6 evaluation notes, 40 unlabelled pool notes; batch size 3."""
    project = projects["A"]
    notes = generate_notes(58, seed=11)
    import_documents(project=project, documents=notes[:12], annotated=True)
    import_documents(project=project, documents=notes[12:18], annotated=True, evaluation=True)
    import_documents(project=project, documents=notes[18:], annotated=False)
    project.batch_size = 3
    project.strategy = "LCUB_6"
    project.save()
    return project, {note.name: note for note in notes[18:]}


_wait = wait_for


async def _received(layer, channel, *, until: tuple[str, int], timeout: float = 10.0) -> list[tuple]:
    """(kind, stage) of the messages the channel got, up to the one of kind ``until[0]`` for job ``until[1]``."""
    kinds = []
    while True:
        try:
            message = await asyncio.wait_for(layer.receive(channel), timeout)
        except asyncio.TimeoutError:
            return kinds
        kinds.append((message["kind"], message["data"].get("stage")))
        if message["kind"] == until[0] and message["data"].get("job") == until[1]:
            return kinds


def _annotate_one(client, project_id: int, gold: dict) -> dict:
    """Take the next record through the API and submit its true spans; returns the hand-out."""
    handout = client.post(f"/api/projects/{project_id}/next/").json()
    note = gold[handout["document"]["external_id"]]
    spans = [{"start": s.start, "end": s.end, "label": s.label, "origin": "human"} for s in note.spans]
    response = client.post(handout["urls"]["submit"], {
        "version": handout["annotation"]["version"], "spans": spans, "active_seconds": 40.0,
    }, format="json")
    assert response.status_code == 200, response.content
    return handout


def test_a_batch_of_submissions_retrains_reranks_and_changes_the_next_record(loop_project, users, api_as,
                                                                            worker_factory):
    project, gold = loop_project
    first = train_and_rank(project=project)
    old_ranking = Ranking.objects.get(project=project, is_current=True)
    worker = worker_factory(processes=2)

    # A layer of its own: the process-wide one keeps asyncio locks bound to event loops of earlier tests.
    layer = RedisChannelLayer(hosts=[settings.REDIS_URL])
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(project_group(project.pk), channel)

    client = api_as(users["annotator"])
    handed = [_annotate_one(client, project.pk, gold) for _ in range(project.batch_size)]
    # The first records came from the old ranking, best first.
    top = list(PoolScore.objects.filter(ranking=old_ranking).order_by("rank").values_list("document_id", flat=True))
    assert [h["document"]["id"] for h in handed] == top[:3]

    version = _wait(lambda: ModelVersion.objects.filter(project=project, is_current=True).exclude(pk=first.pk)
                    .first(), 120, worker, "a new model version")
    job = RetrainJob.objects.get(model_version=version)
    assert job.reason == "batch" and job.status == "done" and job.shards >= 1
    assert version.n_documents == 12 + 3 and version.metrics["entity"]["f1"] > 0
    assert ModelVersion.objects.filter(project=project).count() == 2

    ranking = Ranking.objects.get(project=project, is_current=True)
    assert ranking.pk != old_ranking.pk and ranking.model_version_id == version.pk
    pool = set(Document.objects.filter(project=project, role="pool", status="pool").values_list("pk", flat=True))
    scored = list(PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("document_id", "score"))
    assert {document_id for document_id, _ in scored} == pool  # every free record scored once
    assert [score for _, score in scored] == sorted((score for _, score in scored), reverse=True)
    old_scores = dict(PoolScore.objects.filter(ranking=old_ranking).values_list("document_id", "score"))
    assert any(abs(old_scores[d] - s) > 1e-9 for d, s in scored)  # the new model scores differently

    # The first records were completed in the transaction that published the ranking: served ready.
    mark = completion_mark(project)
    first_served = PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("pre_annotations", flat=True)
    assert all(pre.get("completed") == mark for pre in first_served[:COMPLETED_BEFORE_PUBLISHING])
    nxt = client.post(f"/api/projects/{project.pk}/next/").json()
    assert nxt["document"]["id"] == scored[0][0]  # the new model's first choice is served next
    # Right after publishing, the worker completed the suggestions of the new ranking's first records (all of
    # them here) ahead of their hand-out.
    _wait(lambda: all(pre.get("completed") == mark for pre in PoolScore.objects.filter(
        ranking=ranking, document__status="pool").values_list("pre_annotations", flat=True)), 30, worker,
        "the first records completed ahead")

    kinds = async_to_sync(_received)(layer, channel, until=("ranking_ready", job.pk))
    assert ("retrain_progress", "training") in kinds and ("retrain_progress", "scoring") in kinds
    assert kinds[-1] == ("ranking_ready", "done")
    # Once idle, the process that trained the model prepares the next retrain's first pass from it.
    _wait(lambda: "Idle work _prepare_next_fit of process" in worker.log(), 60, worker, "the next fit prepared")
    assert "failed" not in "".join(line for line in worker.log().splitlines(True) if "Idle work" in line)
    # The model was evaluated by a task of the scoring's chord, after training and before publishing; the job
    # keeps its spans on every evaluation document, for the next model's comparison.
    assert kinds.index(("retrain_progress", "training")) < kinds.index(("retrain_progress", "evaluated"))
    evaluation = Document.objects.filter(project=project, role="evaluation").count()
    assert job.result["evaluation"]["done"] and job.result["evaluation"]["documents"] == evaluation > 0
    assert len(RetrainJob.objects.filter(pk=job.pk).values_list("evaluation_spans", flat=True).get()) == evaluation

    # The worker featurized each record it trained on, evaluated and scored once, for every process and host.
    stored = set(StoredFeatures.objects.filter(document__project=project).values_list("document_id", flat=True))
    assert stored == set(Document.objects.filter(project=project).values_list("pk", flat=True))


def test_killing_the_worker_mid_retrain_ends_with_exactly_one_new_model(loop_project, users, api_as, tmp_path,
                                                                        worker_factory):
    project, gold = loop_project
    # Slow the training down enough to be caught in the middle of it.
    project.tagger = {"kind": "crf", "params": {"max_iterations": 2000, "epsilon": 1e-12}}
    project.save()
    worker = worker_factory(processes=1)
    client = api_as(users["annotator"])
    for _ in range(project.batch_size):
        _annotate_one(client, project.pk, gold)
    job = _wait(lambda: RetrainJob.objects.filter(project=project, status="training", attempt=1)
                .exclude(owner="").first(), 60, worker, "the retrain to start")
    time.sleep(0.5)
    assert RetrainJob.objects.get(pk=job.pk).status == "training"
    worker.kill()
    assert not ModelVersion.objects.filter(project=project).exists()
    assert RetrainJob.objects.get(pk=job.pk).status == "training"  # nobody ended it

    replacement = worker_factory(processes=1)
    job = _wait(lambda: RetrainJob.objects.filter(pk=job.pk, status="done").first(), 180, replacement,
                "the retrain to be resumed and finished")
    # Taken over: as attempt 2 when recovery claims it first, as attempt 3 when the new worker first ends the
    # dead attempt at its start (whether the killed process is gone by then is a matter of timing).
    assert job.attempt in (2, 3)
    versions = ModelVersion.objects.filter(project=project)
    assert versions.count() == 1 and versions.get().is_current and job.model_version_id == versions.get().pk
    ranking = Ranking.objects.get(project=project, is_current=True)
    assert ranking.model_version_id == versions.get().pk
    document_ids = list(PoolScore.objects.filter(ranking=ranking).values_list("document_id", flat=True))
    assert len(document_ids) == len(set(document_ids)) == 40 - 3
    assert Ranking.objects.filter(project=project).count() == 1  # no half-written ranking left behind
    assert RetrainJob.objects.filter(project=project).count() == 1


def test_a_worker_killed_while_scoring_does_not_hold_up_the_job(loop_project, worker_factory, monkeypatch):
    """A worker killed mid-scoring leaves the shard it had taken unacknowledged in the broker (so the
    attempt's chord never completes) and the attempt's other shards queued. The next worker must not take
    those shards as the live attempt's — they would renew the lease and hide the job from recovery — but
    end the dead attempt before it takes any message and score the pool again as a new attempt."""
    import socket
    import subprocess

    from django.utils import timezone

    from learning import tasks
    from learning.services import jobs, retrain as services

    project, _gold = loop_project
    monkeypatch.setenv("DEIDLOOP_SHARD_DOCUMENTS", "10")  # read by the worker at its start
    monkeypatch.setattr(services, "SHARD_DOCUMENTS", 10)
    job, _ = jobs.request_retrain(project=project, reason=RetrainJob.Reason.LEAD, force=True)
    job = jobs.claim(job.pk)
    shards = services.train(job)
    assert len(shards) > 2  # full shards of 10, the last ones shorter (services.shards)
    job.refresh_from_db()
    # The attempt's owner is a process of this machine that has died, its lease still running.
    dead = subprocess.Popen(["true"])
    dead.wait()
    RetrainJob.objects.filter(pk=job.pk).update(
        owner=f"{socket.gethostname()}:{dead.pid}", lease_until=timezone.now() + timedelta(seconds=90))
    # The shard the dead process held is lost with it; the others are still queued.
    for shard in shards[1:]:
        tasks.score_shard.si(job.pk, job.attempt, shard).apply_async()

    worker = worker_factory(processes=1)
    done = _wait(lambda: RetrainJob.objects.filter(pk=job.pk, status="done").first(), 60, worker,
                 "the job to be resumed and published well within a lease")
    assert done.attempt >= job.attempt + 2  # the dead attempt ended, then a new one claimed
    ranking = Ranking.objects.get(project=project, is_current=True)
    scored = list(PoolScore.objects.filter(ranking=ranking).values_list("document_id", flat=True))
    assert sorted(scored) == sorted(i for shard in shards for i in shard)  # the whole pool, each once


def test_a_cold_fit_due_runs_on_the_worker_after_publishing_and_the_next_retrain_starts_from_it(
        loop_project, users, api_as, tmp_path, worker_factory):
    project, gold = loop_project
    project.tagger = {"kind": "crf", "params": {"refit_every": 1}}
    project.save(update_fields=["tagger"])
    first = train_and_rank(project=project)
    worker = worker_factory(processes=2)
    client = api_as(users["annotator"])
    bases = tmp_path / "data" / "models"  # the worker's own data folder

    for _ in range(project.batch_size):
        _annotate_one(client, project.pk, gold)
    second = _wait(lambda: ModelVersion.objects.filter(project=project, is_current=True).exclude(pk=first.pk)
                   .first(), 120, worker, "the second model")
    assert RetrainJob.objects.get(model_version=second).result["fit"]["cold_fit_due"] is True
    _wait(lambda: list(bases.glob(f"project-{project.pk}-base-*.pickle")), 120, worker, "a base fitted from zero")

    for _ in range(project.batch_size):
        _annotate_one(client, project.pk, gold)
    third = _wait(lambda: ModelVersion.objects.filter(project=project, is_current=True)
                  .exclude(pk__in=[first.pk, second.pk]).first(), 120, worker, "the third model")
    fit = RetrainJob.objects.get(model_version=third).result["fit"]
    assert (fit["kind"], fit["continued_from"], fit["warm_fits_since_cold"]) == ("warm", "base", 1)
    assert third.n_documents == 12 + 6 and not list(bases.glob(f"project-{project.pk}-base-*.pickle"))


def test_with_the_postgres_artifact_store_a_worker_with_a_data_folder_of_its_own_scores_and_publishes(
        loop_project, users, api_as, tmp_path, settings):
    settings.ARTIFACT_STORE, settings.DATA_DIR = "postgres", tmp_path / "web-data"
    project, gold = loop_project
    first = train_and_rank(project=project)  # trained here, kept in the database
    own = tmp_path / "worker-data"
    worker = Worker(queue=_queue(), data_dir=own, log_path=tmp_path / "worker.log", processes=1,
                    environment={"DEIDLOOP_ARTIFACT_STORE": "postgres"}).start()
    try:
        client = api_as(users["annotator"])
        for _ in range(project.batch_size):
            _annotate_one(client, project.pk, gold)
        version = _wait(lambda: ModelVersion.objects.filter(project=project, is_current=True).exclude(pk=first.pk)
                        .first(), 120, worker, "a model published by the worker")
        job = RetrainJob.objects.get(model_version=version)
        assert job.result["fit"]["continued_from"] == "current"  # it read this process's model from the database
        assert not (own / "models").exists() and not (settings.DATA_DIR / version.artifact).exists()
        ranking = Ranking.objects.get(project=project, is_current=True)
        top = PoolScore.objects.filter(ranking=ranking).order_by("rank").values_list("document_id", flat=True)[0]
        assert client.post(f"/api/projects/{project.pk}/next/").json()["document"]["id"] == top
    finally:
        worker.stop()
