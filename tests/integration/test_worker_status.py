"""``./deidloop manage status`` with a real Celery worker and Redis: the worker's heartbeat (host, pid, node,
what it runs), the queue's length, and the last retrain with the host that trained and scored it and where its
time went; a worker that stops leaves the list."""
from __future__ import annotations

import io
import json
import socket
import time

import pytest
from django.core.management import call_command

from annotator.models import Document
from learning.models import RetrainJob
from learning.services import jobs, workers
from learning.tasks import enqueue
from tests.integration.celery_worker import Worker, wait_for as _wait

pytestmark = pytest.mark.django_db(transaction=True)


def _status() -> dict:
    out = io.StringIO()
    call_command("status", "--json", stdout=out)
    return json.loads(out.getvalue())


def _ours(worker: Worker) -> list[dict]:
    """The heartbeats of ``worker`` that status lists (a worker of an earlier test may still be listed)."""
    return [beat for beat in _status()["workers"] if beat["pid"] == worker.process.pid]


def test_status_shows_the_worker_the_queue_and_who_trained_and_scored_the_last_retrain(
        loop_project, users, tmp_path, settings, monkeypatch):
    from django.db import transaction

    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.setenv("DEIDLOOP_SHARD_DOCUMENTS", "10")  # read by the worker at its start: 3 shards
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    pool = Document.objects.filter(project=loop_project, role="pool", status="pool").count()

    waiting_before = _status()["queues"][queue]
    with transaction.atomic():
        job, _ = jobs.request_retrain(project=loop_project, reason=RetrainJob.Reason.LEAD, force=True)
        enqueue(job)
    before = _status()
    assert before["queues"] == {queue: waiting_before + 1}  # the retrain waits for a worker
    waiting = before["retrains"][0]
    assert (waiting["project"], waiting["job"], waiting["status"], waiting["trained_on"]) == ("A", job.pk, "queued", None)

    worker = Worker(queue=queue, data_dir=tmp_path / "data", log_path=tmp_path / "worker.log").start()
    try:
        here = socket.gethostname()
        seen = _wait(lambda: _ours(worker), 2 * workers.HEARTBEAT_SECONDS, worker, "the worker's heartbeat")
        beat = seen[0]
        assert (beat["host"], beat["pid"], beat["queues"]) == (here, worker.process.pid, [queue])
        assert beat["node"].startswith("test-") and beat["node"].endswith(f"@{here}")
        assert len(beat["processes"]) == 1 and beat["started_at"] <= beat["last_seen"]

        done = _wait(lambda: RetrainJob.objects.filter(pk=job.pk, status="done").first(), 120, worker, "the retrain")
        report = _status()
        assert here in report["hosts"] and report["queues"] == {queue: 0}
        last = report["retrains"][0]
        assert (last["job"], last["status"], last["model_version"]) == (job.pk, "done", done.model_version_id)
        assert last["trained_on"] == here and last["scored_on"] == {here: pool}
        seconds = last["seconds"]
        assert seconds["waiting"] > 0  # queued before the worker started
        assert seconds["training"] == done.result["train_seconds"] > 0
        assert seconds["scoring"] == done.model_version.scoring_seconds > 0
        assert seconds["total"] >= seconds["waiting"] + seconds["scoring"]

        text = io.StringIO()
        call_command("status", stdout=text)
        assert f"  {here:<20} pid {worker.process.pid:<7} {beat['node']}  up since" in text.getvalue()
        assert f"trained on {here}; scored on {here} ({pool})" in text.getvalue()
    finally:
        worker.stop()
    assert not _ours(worker)  # a worker that stops says so at once


def test_a_killed_workers_heartbeat_runs_out(loop_project, tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    worker = Worker(queue=settings.CELERY_TASK_DEFAULT_QUEUE, data_dir=tmp_path / "data",
                    log_path=tmp_path / "worker.log").start()
    _wait(lambda: _ours(worker), 2 * workers.HEARTBEAT_SECONDS, worker, "the worker's heartbeat")
    worker.kill()
    killed = time.monotonic()
    _wait(lambda: not _ours(worker), workers.HEARTBEAT_TTL + 2, worker, "the heartbeat to run out")
    assert time.monotonic() - killed > workers.HEARTBEAT_TTL - workers.HEARTBEAT_SECONDS - 1
