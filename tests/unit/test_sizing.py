"""The web processes, the worker processes and the embedded PostgreSQL are sized from the machine and agree."""
from __future__ import annotations

import pytest

from config import sizing

VARIABLES = ("DEIDLOOP_WEB_WORKERS", "DEIDLOOP_WEB_THREADS", "DEIDLOOP_WORKER_PROCESSES",
             "DEIDLOOP_WORKER_IDLE_PROCESSES", "DEIDLOOP_WORKER_IDLE_SECONDS",
             "DEIDLOOP_PG_SPARE_CONNECTIONS", "DEIDLOOP_PG_MAX_CONNECTIONS", "DEIDLOOP_PG_SHARED_BUFFERS")


@pytest.fixture(autouse=True)
def unset(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_one_web_process_per_core_unless_set(monkeypatch):
    monkeypatch.setattr(sizing, "cores", lambda: 6)
    assert sizing.web_workers() == 6
    monkeypatch.setenv("DEIDLOOP_WEB_WORKERS", "3")
    assert sizing.web_workers() == 3
    monkeypatch.setenv("DEIDLOOP_WEB_WORKERS", "0")
    assert sizing.web_workers() == 1
    monkeypatch.setenv("DEIDLOOP_WEB_WORKERS", "")  # docker-compose.yml passes it empty when unset
    assert sizing.web_workers() == 6


def test_an_idle_worker_keeps_no_pool_process_after_five_minutes_unless_set(monkeypatch):
    from config.launcher import worker_command

    assert (sizing.worker_idle_processes(), sizing.worker_idle_seconds()) == (0, 300.0)
    assert worker_command()[worker_command().index("--autoscale") + 1] == "2,0"
    monkeypatch.setenv("DEIDLOOP_WORKER_PROCESSES", "3")
    monkeypatch.setenv("DEIDLOOP_WORKER_IDLE_PROCESSES", "5")  # never more than the most
    monkeypatch.setenv("DEIDLOOP_WORKER_IDLE_SECONDS", "0")  # Celery refuses a keepalive of 0
    assert (sizing.worker_idle_processes(), sizing.worker_idle_seconds()) == (3, 1.0)
    assert worker_command()[worker_command().index("--autoscale") + 1] == "3,3"


def test_the_database_allows_every_web_thread_and_worker_process(monkeypatch):
    monkeypatch.setattr(sizing, "cores", lambda: 4)
    monkeypatch.setenv("DEIDLOOP_WORKER_PROCESSES", "3")
    # 4 web processes x (4 threads + 2) + 3 worker processes + the worker's main process's two threads
    assert sizing.database_connections() == 4 * 6 + 3 + 2 == 29
    assert sizing.postgres_settings()["max_connections"] == str(29 + 100)
    monkeypatch.setenv("DEIDLOOP_WEB_THREADS", "8")
    monkeypatch.setenv("DEIDLOOP_PG_SPARE_CONNECTIONS", "10")
    assert sizing.postgres_settings()["max_connections"] == str(4 * 10 + 3 + 2 + 10)
    monkeypatch.setenv("DEIDLOOP_PG_MAX_CONNECTIONS", "300")
    assert sizing.postgres_settings()["max_connections"] == "300"


@pytest.mark.parametrize(("memory_mib", "shared", "cache"), [
    (1024, "128MB", "512MB"), (128, "32MB", "64MB"), (16384, "512MB", "8192MB"),
])
def test_memory_settings_follow_the_machine_within_bounds(monkeypatch, memory_mib, shared, cache):
    monkeypatch.setattr(sizing, "memory_bytes", lambda: memory_mib * sizing.MIB)
    settings = sizing.postgres_settings()
    assert (settings["shared_buffers"], settings["effective_cache_size"]) == (shared, cache)
    assert (settings["work_mem"], settings["maintenance_work_mem"]) == ("8MB", "64MB")
    monkeypatch.setenv("DEIDLOOP_PG_SHARED_BUFFERS", "64MB")
    assert sizing.postgres_settings()["shared_buffers"] == "64MB"
