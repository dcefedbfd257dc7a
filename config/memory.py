"""Whether a worker process keeps the memory it frees, for its next task to reuse; and what it does while idle:
work given to it for such moments, then collecting its garbage (:class:`IdleCollection`).

A retrain allocates the same large arrays every time: the training set's matrices, every token's label scores
and marginals, each tens of megabytes. glibc's malloc serves a block that large with a mapping of its own and
unmaps it when it is freed, so every retrain faults in, and has the kernel zero, every page of them again. On
MEDDOCAN's 485 training records that was about a fifth of a warm retrain's training: building the training set
took 0.8-1.5 s in a pool process, against 0.3-0.5 s where the pages were already there. Told to take every
block from its heap and never to give the heap's top back (``mallopt``: ``M_MMAP_MAX`` 0, ``M_TRIM_THRESHOLD``
2 GiB), a process reuses the pages of its last task.

The price: a process holds the memory of its largest task until it ends, where it used to shrink back after
each one. The process that trains on those 485 records stays at about 900 MiB, where it went back to about
400 MiB; it reaches that peak during every retrain anyway. The worker ends idle pool processes
(``DEIDLOOP_WORKER_IDLE_SECONDS``), which gives it back. No Django here: read by ``config.celery``.
"""
from __future__ import annotations

import ctypes
import gc
import logging
import os
import threading
import time
from typing import Callable, Sequence

#: ``mallopt``'s parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
#: The free memory at the heap's top above which it is given back after all (``mallopt`` takes an int).
TRIM_THRESHOLD = 2**31 - 1


def keep_freed_memory() -> str | None:
    """Have this process's malloc keep what it frees (see the module's docstring); None when it does, or why not
    (it is not glibc's, or refused a setting)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):
        return "the C library is not glibc"
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    for name, parameter, value in (("M_MMAP_MAX", M_MMAP_MAX, 0),
                                   ("M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
        if mallopt(parameter, value) != 1:
            return f"glibc refused {name} = {value}"
    return None


class IdleCollection:
    """Python's collector of reference cycles, run in full in a worker pool process while it is idle.

    A full collection walks every object that can hold others, and a pool process that has scored a pool holds
    many: its features' vocabulary, the gold's features and lexicon, the models it keeps. The interpreter starts
    one every few tasks on its own, 0.1-0.15 s in the middle of a retrain (about three a retrain in a worker of
    two processes, on MEDDOCAN's 500 gold and 5,000 pool records). Told when tasks start and end (:meth:`started`,
    :meth:`ended`), a thread of the process's own waits until no task has run for ``idle_seconds``, then
    collects everything (``gc.unfreeze``, ``gc.collect``) and freezes what is left (``gc.freeze``): the
    collections of the next tasks walk only what those tasks made. Nothing escapes the collector for longer than
    until the next idle moment, whose collection unfreezes everything again. A task that starts during a
    collection waits for it, as it would for one the interpreter started.

    ``work``: functions the thread calls first, each time, outside the lock (a task that starts meanwhile does
    not wait; the collection then waits for the next idle moment): work for which the process has time only
    between tasks, such as preparing the next fit of a model it trained. A function returns whether it did
    anything (then its name goes to the log); what it raises is logged, never raised.
    """

    def __init__(self, idle_seconds: float = 1.0, work: Sequence[Callable[[], object]] = ()) -> None:
        self.idle_seconds = idle_seconds
        self.work = list(work)
        self.collections = 0
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._running = 0
        self._last_end = 0.0
        self._collected_at = 0.0
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> "IdleCollection":
        self._thread = threading.Thread(target=self._run, name="idle-collection", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped = True
        self._ended.set()
        if self._thread is not None:
            self._thread.join()

    def started(self) -> None:
        with self._lock:
            self._running += 1

    def ended(self) -> None:
        with self._lock:
            self._running = max(0, self._running - 1)
            self._last_end = time.monotonic()
        self._ended.set()

    def _run(self) -> None:
        while not self._stopped:
            self._ended.wait()
            self._ended.clear()
            while not self._stopped:
                with self._lock:
                    if self._running or self._last_end <= self._collected_at:
                        break  # that task's end wakes this thread again; or none ended since the last collection
                    wait = self._last_end + self.idle_seconds - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                    continue
                self._do_work()
                with self._lock:
                    if not self._running:
                        self._collect()
                break

    def _do_work(self) -> None:
        log = logging.getLogger(__name__)
        for function in self.work:
            name, began = getattr(function, "__name__", function), time.perf_counter()
            try:
                done = function()
            except Exception:  # noqa: BLE001 - idle work must never take the process down
                log.exception("Idle work %s of process %s failed", name, os.getpid())
                continue
            if done:
                log.info("Idle work %s of process %s done in %.2f s", name, os.getpid(), time.perf_counter() - began)

    def _collect(self) -> None:
        began = time.perf_counter()
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        self._collected_at = time.monotonic()
        self.collections += 1
        logging.getLogger(__name__).info(
            "Collected the garbage of process %s while idle: %s objects freed, %s kept (frozen), in %.2f s",
            os.getpid(), freed, gc.get_freeze_count(), time.perf_counter() - began)
