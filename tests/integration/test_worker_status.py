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


def test_a_lost_workers_last_heartbeat_goes_to_one_caller_and_ends_the_attempt_of_its_shard(loop_project):
    """A worker whose key expired (here: deleted) is handed to the first caller only; its record names the
    shard it held, whose attempt is then ended (and the lease dropped) so that the next claim resumes the job."""
    job, _ = jobs.request_retrain(project=loop_project, reason=RetrainJob.Reason.LEAD, force=True)
    job = jobs.claim(job.pk)
    RetrainJob.objects.filter(pk=job.pk).update(owner="deid-other-host:4242", status="scoring")
    record = {"host": "deid-other-host", "pid": 4240, "node": "celery@deid-other-host", "queues": [],
              "processes": [4242], "running": [{"task": "learning.score_shard", "id": "x", "args": [job.pk, 1],
                                                 "pid": 4242, "since": None}], "reserved": []}
    workers.publish(record)
    assert _claimed() == []  # alive
    workers._redis().delete(workers._live_key("deid-other-host:4240"))  # its heartbeat ran out
    (lost,) = _claimed()
    assert (lost["host"], lost["pid"], lost["running"]) == ("deid-other-host", 4240, record["running"])
    assert _claimed() == []  # handed out once
    workers.unclaim([lost])  # resuming failed: the next beat tries again
    assert [again["pid"] for again in _claimed()] == [4240]

    from learning.tasks import _resume_work_of_lost_workers

    _resume_work_of_lost_workers([lost])
    job.refresh_from_db()
    assert (job.attempt, job.owner, job.status) == (2, "", "scoring")
    assert job.pk in jobs.stalled_jobs()  # recover_jobs (sent) takes it as the next attempt


def _claimed() -> list[dict]:
    """The lost workers claimed now, of this test's made-up host (workers killed by earlier tests are lost too)."""
    return [record for record in workers.claim_lost() if record["host"] == "deid-other-host"]
