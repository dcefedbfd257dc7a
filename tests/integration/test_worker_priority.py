"""The worker runs below the web's CPU priority (config.sizing.worker_nice), its pool processes included."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.celery_worker import Worker


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _children(pid: int) -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()
            and _parent(int(entry.name)) == pid]


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return None


@pytest.mark.parametrize("setting, expected", [(None, 10), ("0", 0), ("25", 19)])
def test_the_worker_and_its_pool_run_below_the_web(tmp_path, monkeypatch, setting, expected):
    here = _nice(os.getpid())
    monkeypatch.delenv("DEIDLOOP_WORKER_NICE", raising=False)
    environment = {} if setting is None else {"DEIDLOOP_WORKER_NICE": setting}
    worker = Worker(queue=f"priority-{tmp_path.name}", data_dir=tmp_path / "data", log_path=tmp_path / "worker.log",
                    processes=2, environment=environment)
    worker.start()
    try:
        pool = _children(worker.process.pid)
        assert len(pool) == 2, worker.log()
        assert [_nice(pid) for pid in [worker.process.pid, *pool]] == [min(here + expected, 19)] * 3
    finally:
        worker.stop()
