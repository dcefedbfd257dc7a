"""A pool process of the launcher's worker collects its reference cycles once it is idle, after a task and not
during one (``config.memory.IdleCollection``, wired to the task signals in ``config.celery``). A real worker
on a Redis of the test's own; every wait is for a line of the worker's log, with a deadline far above what a
loaded two-core machine needs."""
from __future__ import annotations

import re

import pytest

from tests.integration.test_broker_faults import (  # noqa: F401 - fixtures
    START_SECONDS, _wait, client, redis, worker,
)

pytestmark = pytest.mark.django_db

SECONDS = 60
COLLECTED = re.compile(r"ForkPoolWorker-\d+\] Collected the garbage of process (\d+) while idle: "
                       r"(\d+) objects freed, (\d+) kept \(frozen\)")


def test_a_pool_process_collects_its_garbage_once_idle_after_a_task(worker, client):  # noqa: F811
    assert not COLLECTED.search(worker.log())  # a process that has run no task waits
    for round_ in (1, 2):
        probe = client.send_task("tests.broker_probe.worker_pid", queue=worker.queue)
        _wait(probe.ready, seconds=SECONDS, what="the task ran", worker=worker)
        assert probe.successful(), worker.log()
        _wait(lambda: len(COLLECTED.findall(worker.log())) >= round_, seconds=SECONDS,
              what="an idle collection after the task", worker=worker)
        log = worker.log()
        # After the task had ended, in the process that ran it; what survived is frozen.
        assert log.rindex("Collected the garbage") > log.rindex("Task tests.broker_probe.worker_pid")
        assert all(int(kept) > 0 for _, _, kept in COLLECTED.findall(log))
