"""The Celery worker under broker faults: Redis restarted under a running worker, while a task is in flight
(its message unacknowledged, as late acks leave it), neither kills the worker nor stops it consuming.

The worker runs the launcher's command line (``config.launcher.worker_command``: its options) on a Redis
of the test's own, which the test stops and starts again; the test database is its database.
Every wait is for a signal (a file the task writes, a line of the worker's log, a result) with a deadline
far above what a loaded two-core machine needs, never a fixed sleep, and a failure shows the worker's log.
"""
from __future__ import annotations

import time
import uuid

import pytest
from celery import Celery

from config.embedded import EmbeddedRedis
from tests.integration.celery_worker import Worker, launcher_worker
from tests.integration.launcher_process import free_port

pytestmark = pytest.mark.django_db

#: Deadlines for the worker to start, and for a task sent after the restart to come back.
START_SECONDS = 120
RESULT_SECONDS = 30


@pytest.fixture
def redis(tmp_path):
    """A Redis of this test's own (password and data in ``tmp_path``), stopped at the end."""
    server = EmbeddedRedis(data_dir=tmp_path / "redis", port=free_port(), secrets_dir=tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def worker(redis, tmp_path, monkeypatch):
    """The launcher's worker (up to two pool processes, as ``up`` starts it) on ``redis``, with the probe tasks."""
    monkeypatch.setenv("DEIDLOOP_WORKER_PROCESSES", "2")
    worker = launcher_worker(redis_url=redis.url, folder=tmp_path, queue=f"broker-faults-{uuid.uuid4().hex[:8]}")
    worker.start(timeout=START_SECONDS)
    yield worker
    worker.stop()


@pytest.fixture
def client(redis):
    """Sends tasks to ``redis`` and reads their results there (the test process's own app uses the shared
    Redis). Results are polled (``ready()``, ``result``), never waited for on a subscription, which would
    outlive the test's Redis."""
    app = Celery("broker-faults", broker=redis.url, backend=redis.url, set_as_current=False)
    yield app
    app.close()


def _wait(condition, *, seconds: float, what: str, worker: Worker):
    """Poll ``condition()`` until it returns something true (returned); fail at once if the worker exits."""
    deadline = time.monotonic() + seconds
    while True:
        if worker.process.poll() is not None:
            raise AssertionError(f"the worker exited with {worker.process.returncode} before {what}; "
                                 f"its log:\n{worker.log()}")
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds} s; the worker's log:\n{worker.log()}")
        time.sleep(0.05)


def _logged(worker: Worker, text: str, offset: int):
    def found() -> bool:
        with worker.log_path.open("rb") as handle:
            handle.seek(offset)
            return text.encode() in handle.read()
    return found


def test_a_redis_restart_under_a_running_task_keeps_the_same_worker_consuming(redis, worker, client, tmp_path):
    """The task in flight keeps its message unacknowledged across the restart; a task sent once Redis is back
    is run by the same worker process (same pid) within ``RESULT_SECONDS``, and so is the end of the held
    one. (With Celery 5.7.0 the worker's teardown of the lost connection raised ``AttributeError`` from
    kombu's ``_connparams``: the worker stopped consuming and sat in a warm shutdown behind the held task.)"""
    started, release = tmp_path / "started", tmp_path / "release"
    try:
        held = client.send_task("tests.broker_probe.hold", args=(str(started), str(release)), queue=worker.queue)
        _wait(started.exists, seconds=RESULT_SECONDS, what="the held task started", worker=worker)

        offset = worker.log_path.stat().st_size
        redis.stop()
        _wait(_logged(worker, "Connection to broker lost", offset), seconds=RESULT_SECONDS,
              what="the worker noticed that Redis went away", worker=worker)
        redis.start()
        restarted = time.monotonic()

        probe = client.send_task("tests.broker_probe.worker_pid", queue=worker.queue)
        _wait(probe.ready, seconds=RESULT_SECONDS, what="a task sent after the restart ran", worker=worker)
        back_after = time.monotonic() - restarted
        assert probe.successful() and probe.result == worker.process.pid, worker.log()
    finally:
        release.touch()  # never leave the worker (stopping, it waits for its tasks) behind the held task
    _wait(held.ready, seconds=RESULT_SECONDS, what="the held task ended", worker=worker)
    assert held.successful() and held.result == worker.process.pid, worker.log()
    assert worker.process.poll() is None and back_after < RESULT_SECONDS
