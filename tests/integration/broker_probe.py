"""Tasks that a test worker loads besides the application's (``--include tests.integration.broker_probe``), so
that a test can tell which worker process ran a task and hold a message unacknowledged for as long as it
needs. The test process sends them by name; it need not import this module."""
from __future__ import annotations

import os
import time
from pathlib import Path

from celery import shared_task


@shared_task(name="tests.broker_probe.hold")
def hold(started: str, release: str, seconds: float = 120.0) -> int:
    """Write ``started``, then wait (at most ``seconds``) until ``release`` exists: with late acks the
    message stays unacknowledged all that time. Returns the worker's pid (the pool process's parent).

    A copy that finds ``started`` written is the message redelivered after the broker came back (Celery gives
    back the unacknowledged messages of a lost connection): it returns at once, rather than hold a second pool
    process while the first copy still holds the first."""
    if Path(started).exists():
        return os.getppid()
    Path(started).write_text(str(os.getpid()))
    deadline = time.monotonic() + seconds
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.getppid()


@shared_task(name="tests.broker_probe.worker_pid")
def worker_pid() -> int:
    """The pid of the worker that ran this task (the pool process's parent)."""
    return os.getppid()
