"""A worker process told to keep the memory it frees (config.memory) reuses its pages for the next task: a large
array freed leaves its pages with the process, where by default they go back to the system. And it collects its
reference cycles while it is idle (``IdleCollection``)."""
from __future__ import annotations

import gc
import json
import logging
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path

import pytest

from config import sizing
from config.memory import IdleCollection
from tests.integration.launcher_process import wait_until

ROOT = Path(__file__).resolve().parents[2]

# In a process of its own: malloc's settings cannot be undone. It frees a 256 MiB array it wrote to, and says how
# much of it the process still holds.
PROGRAM = """
import json, sys
import numpy as np
from config.memory import keep_freed_memory

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096

refused = keep_freed_memory() if sys.argv[1] == "keep" else "not asked"
size = 256 * 2**20
before = resident()
block = np.ones(size, dtype=np.uint8)
del block
kept = resident() - before
print(json.dumps({"refused": refused, "kept": kept / size}))
"""


def run(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM, mode], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=60)
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_a_process_that_keeps_freed_memory_holds_the_pages_of_a_freed_array_and_by_default_gives_them_back():
    kept, default = run("keep"), run("default")
    if kept["refused"] == "the C library is not glibc":
        pytest.skip(kept["refused"])
    assert kept["refused"] is None
    assert kept["kept"] > 0.9, kept  # the freed array's pages stay with the process
    assert default["kept"] < 0.1, default  # unmapped when freed


def test_pool_processes_keep_freed_memory_unless_the_sizing_says_not(monkeypatch):
    monkeypatch.delenv("DEIDLOOP_WORKER_KEEP_FREED_MEMORY", raising=False)
    assert sizing.worker_keeps_freed_memory()
    for off in ("0", "false", "no"):
        monkeypatch.setenv("DEIDLOOP_WORKER_KEEP_FREED_MEMORY", off)
        assert not sizing.worker_keeps_freed_memory()
    monkeypatch.setenv("DEIDLOOP_WORKER_KEEP_FREED_MEMORY", "1")
    assert sizing.worker_keeps_freed_memory()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collection():
    """An idle collection of this process, the interpreter's own collections off meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    idle = IdleCollection(idle_seconds=0.05).start()
    try:
        yield idle
    finally:
        idle.stop()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def test_an_idle_process_collects_its_cycles_and_freezes_the_rest(collection):
    garbage = weakref.ref(_Cycle())
    kept = _Cycle()
    for _ in range(3):  # tasks one after the other, less than the idle time apart: one collection, after the last
        collection.started()
        collection.ended()
        time.sleep(0.02)
    wait_until(lambda: collection.collections == 1, seconds=10, what="an idle collection", every=0.01)
    assert garbage() is None  # collected by the idle collection (the interpreter's are off)
    assert gc.get_freeze_count() > 0 and kept.me is kept
    time.sleep(0.3)
    assert collection.collections == 1  # no task since: nothing to collect again


def test_no_collection_while_a_task_runs(collection):
    garbage = weakref.ref(_Cycle())
    collection.started()
    collection.ended()
    wait_until(lambda: collection.collections == 1, seconds=10, what="an idle collection", every=0.01)
    collection.started()  # a task runs well past the idle time
    cycle = weakref.ref(_Cycle())
    time.sleep(0.3)
    assert collection.collections == 1 and cycle() is not None and garbage() is None
    collection.ended()
    wait_until(lambda: collection.collections == 2, seconds=10, what="a second idle collection", every=0.01)
    assert cycle() is None


def test_idle_work_runs_before_the_collection_and_a_task_that_starts_meanwhile_does_not_wait(caplog):
    was_enabled = gc.isenabled()
    gc.disable()
    events = []
    release = threading.Event()

    def prepare() -> bool:
        events.append(("work", idle.collections))
        release.wait(10)  # until the test has started a task
        return True

    def broken() -> bool:
        raise RuntimeError("no model to prepare")

    idle = IdleCollection(idle_seconds=0.05, work=[prepare, broken]).start()
    try:
        with caplog.at_level(logging.INFO, logger="config.memory"):
            idle.started()
            idle.ended()
            wait_until(lambda: events, seconds=10, what="the idle work", every=0.01)
            began = time.monotonic()
            idle.started()  # a task starts while the work runs: it is not held up
            assert time.monotonic() - began < 0.5
            release.set()
            time.sleep(0.3)
            assert events == [("work", 0)] and idle.collections == 0  # the task runs: no collection yet
            idle.ended()
            wait_until(lambda: idle.collections == 1, seconds=10, what="the collection after the task", every=0.01)
        assert events[1:] == [("work", 0)]  # the work ran again, then the collection
        assert any("Idle work prepare of process" in r.getMessage() for r in caplog.records)
        failed = [r for r in caplog.records if "Idle work broken of process" in r.getMessage()]
        assert failed and failed[0].levelno == logging.ERROR and "no model to prepare" in failed[0].exc_text
    finally:
        release.set()
        idle.stop()
        gc.unfreeze()
        if was_enabled:
            gc.enable()
