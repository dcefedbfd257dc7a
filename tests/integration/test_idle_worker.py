"""The launcher's worker gives back what its pool processes hold once it has been idle: with
``DEIDLOOP_WORKER_IDLE_PROCESSES`` 0 (the default) it starts without any, starts one for a task, and ends it
``DEIDLOOP_WORKER_IDLE_SECONDS`` after the last task (Celery's autoscaler, ``IdleAutoscaler``); the watchdog
runs in its main process and sends nothing, so an idle worker stays idle. A real worker on a Redis of the
test's own; every wait is for a signal, with a deadline far above what a loaded two-core machine needs."""
from __future__ import annotations

import subprocess
import uuid

import pytest

from tests.integration.celery_worker import Worker, launcher_worker
from tests.integration.test_broker_faults import START_SECONDS, _wait, client, redis  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

#: Seconds without a task before the pool shrinks, in this test (the default is 300).
IDLE_SECONDS = 2
#: Deadline for a task to come back, and for the pool to shrink once idle.
SECONDS = 60


def _pool(worker: Worker) -> set[int]:
    found = subprocess.run(["pgrep", "-P", str(worker.process.pid)], capture_output=True, text=True).stdout
    return {int(pid) for pid in found.split()}


@pytest.fixture
def worker(redis, tmp_path, monkeypatch):  # noqa: F811 - redis is the imported fixture
    monkeypatch.setenv("DEIDLOOP_WORKER_PROCESSES", "2")
    monkeypatch.setenv("DEIDLOOP_WORKER_IDLE_SECONDS", str(IDLE_SECONDS))
    monkeypatch.delenv("DEIDLOOP_WORKER_IDLE_PROCESSES", raising=False)
    worker = launcher_worker(redis_url=redis.url, folder=tmp_path, queue=f"idle-{uuid.uuid4().hex[:8]}")
    worker.start(timeout=START_SECONDS)
    yield worker
    worker.stop()


def test_an_idle_worker_ends_its_pool_processes_and_starts_one_for_the_next_task(worker, client):  # noqa: F811
    assert _pool(worker) == set(), worker.log()  # none until a task comes
    for _ in range(2):
        probe = client.send_task("tests.broker_probe.worker_pid", queue=worker.queue)
        _wait(probe.ready, seconds=SECONDS, what="the task ran", worker=worker)
        # Run by a pool process of this worker (the probe returns its process's parent).
        assert probe.successful() and probe.result == worker.process.pid, worker.log()
        _wait(lambda: _pool(worker) == set(), seconds=SECONDS, what="the idle pool shrank to none", worker=worker)
    assert "Scaling up 1 processes." in worker.log() and "Scaling down 1 processes." in worker.log()
