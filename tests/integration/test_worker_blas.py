"""The worker's processes run their BLAS library on config.sizing.worker_blas_threads threads, whatever the
environment it was started from says, and keep the memory they free unless the sizing says not to
(config.memory)."""
from __future__ import annotations

import re
import time

import pytest

from tests.integration.celery_worker import Worker


@pytest.mark.parametrize("setting, expected, keep, memory", [
    (None, "1", None, "kept for its next task"),
    ("2", "2", "0", "given back (DEIDLOOP_WORKER_KEEP_FREED_MEMORY=0)"),
])
def test_every_pool_process_says_its_blas_uses_the_threads_the_sizing_gives(tmp_path, monkeypatch, setting, expected,
                                                                            keep, memory):
    monkeypatch.delenv("DEIDLOOP_WORKER_BLAS_THREADS", raising=False)
    monkeypatch.delenv("DEIDLOOP_WORKER_KEEP_FREED_MEMORY", raising=False)
    # Started as the tests are, or with OpenBLAS's own default (a thread per core): the sizing decides.
    environment = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    if setting is not None:
        environment["DEIDLOOP_WORKER_BLAS_THREADS"] = setting
    if keep is not None:
        environment["DEIDLOOP_WORKER_KEEP_FREED_MEMORY"] = keep
    worker = Worker(queue=f"blas-{tmp_path.name}", data_dir=tmp_path / "data", log_path=tmp_path / "worker.log",
                    processes=2, environment=environment)
    worker.start()
    try:
        deadline = time.monotonic() + 30.0  # a pool process may log after the worker said it was ready
        while True:
            pool = {int(pid) for pid in re.findall(r"ForkPoolWorker-\d+\] BLAS threads of process (\d+)", worker.log())}
            freed = dict(re.findall(r"Freed memory of process (\d+): (.*)", worker.log()))
            if (len(pool) >= 2 and {int(pid) for pid in freed} >= pool) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        said = re.findall(r"BLAS threads of process (\d+): (.*)", worker.log())
        assert len(pool) == 2, worker.log()
        assert all(libraries.split() == ["openblas", expected] for pid, libraries in said if int(pid) in pool), said
        assert {int(pid) for pid in freed} >= pool, worker.log()
        assert all(freed[str(pid)] == memory for pid in pool), freed
    finally:
        worker.stop()
