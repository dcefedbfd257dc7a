"""The worker's processes run their BLAS library on config.sizing.worker_blas_threads threads, whatever the
environment it was started from says."""
from __future__ import annotations

import re
import time

import pytest

from tests.integration.celery_worker import Worker


@pytest.mark.parametrize("setting, expected", [(None, "1"), ("2", "2")])
def test_every_pool_process_says_its_blas_uses_the_threads_the_sizing_gives(tmp_path, monkeypatch, setting, expected):
    monkeypatch.delenv("DEIDLOOP_WORKER_BLAS_THREADS", raising=False)
    # Started as the tests are, or with OpenBLAS's own default (a thread per core): the sizing decides.
    environment = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    if setting is not None:
        environment["DEIDLOOP_WORKER_BLAS_THREADS"] = setting
    worker = Worker(queue=f"blas-{tmp_path.name}", data_dir=tmp_path / "data", log_path=tmp_path / "worker.log",
                    processes=2, environment=environment)
    worker.start()
    try:
        deadline = time.monotonic() + 30.0  # a pool process may log after the worker said it was ready
        while True:
            pool = {int(pid) for pid in re.findall(r"ForkPoolWorker-\d+\] BLAS threads of process (\d+)", worker.log())}
            if len(pool) >= 2 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        said = re.findall(r"BLAS threads of process (\d+): (.*)", worker.log())
        assert len(pool) == 2, worker.log()
        assert all(libraries.split() == ["openblas", expected] for pid, libraries in said if int(pid) in pool), said
    finally:
        worker.stop()
