"""How many processes, threads and database connections a deployment uses, from the machine it runs on.

Read by the launcher (``./deidloop up``: how many web processes, how many Celery processes), the embedded
PostgreSQL (its connection limit and memory) and the settings, so that the three agree. Every figure can be
set in the environment; the defaults suit the machine the process runs on. No Django here: the launcher
reads it before the settings exist.
"""
from __future__ import annotations

import os

MIB = 1024 * 1024


def _positive(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return max(1, int(value)) if value else max(1, default)


def cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def web_workers() -> int:
    """Web processes (uvicorn) sharing the web port (``DEIDLOOP_WEB_WORKERS``; default one per core): each one runs
    Django's request handling under its own interpreter lock, so one process uses about one core."""
    return _positive("DEIDLOOP_WEB_WORKERS", cores())


def web_threads() -> int:
    """Threads per web process that serve requests (``DEIDLOOP_WEB_THREADS``, default 4); each keeps one
    database connection (config.asgi)."""
    return _positive("DEIDLOOP_WEB_THREADS", 4)


def worker_processes() -> int:
    """Celery worker processes of ``./deidloop up`` at most (``DEIDLOOP_WORKER_PROCESSES``, default 2)."""
    return _positive("DEIDLOOP_WORKER_PROCESSES", 2)


def worker_idle_processes() -> int:
    """Pool processes a worker keeps when it has had no task for ``worker_idle_seconds``
    (``DEIDLOOP_WORKER_IDLE_PROCESSES``, default 0): a pool process that has trained and scored holds the
    model, the features of what it scored, the libraries it imported and the memory of its largest task
    (``worker_keeps_freed_memory``: about 900 MiB on MEDDOCAN), which only its end gives back; the next task
    starts a fresh one (about a second)."""
    value = os.environ.get("DEIDLOOP_WORKER_IDLE_PROCESSES", "").strip()
    return min(max(0, int(value)), worker_processes()) if value else 0


def worker_idle_seconds() -> float:
    """Seconds without a task after which a worker lets its pool shrink to ``worker_idle_processes``
    (``DEIDLOOP_WORKER_IDLE_SECONDS``, default 300: retrains a few minutes apart keep their warm caches)."""
    value = os.environ.get("DEIDLOOP_WORKER_IDLE_SECONDS", "").strip()
    return max(1.0, float(value)) if value else 300.0


def worker_nice() -> int:
    """How much lower than the web's the worker's CPU priority is (``DEIDLOOP_WORKER_NICE``, a nice increment from
    0 to 19, default 10). Where the web and the worker share cores, a retrain then takes the CPU the requests
    leave, instead of a fair share of it: annotators are not kept waiting by the model being trained on their
    work (under a steady stream of requests a retrain takes longer; with the think time of real annotators,
    hardly). 0 keeps the worker level with the web."""
    value = os.environ.get("DEIDLOOP_WORKER_NICE", "").strip()
    return min(max(0, int(value)), 19) if value else 10


def worker_blas_threads() -> int:
    """Threads the BLAS library (numpy's OpenBLAS) of a worker process may use (``DEIDLOOP_WORKER_BLAS_THREADS``,
    default 1). The loop spreads its work itself — the pool over the worker's processes, a fit's objective over
    its own threads (``learning.core.taggers.base.training_threads``) — and its matrix products are small (a
    batch of sentences' label scores times the labels' transitions): BLAS threads of their own on top only
    crowd the same cores. With OpenBLAS's default, a thread per core, the CRF objective on 500 MEDDOCAN records
    took 1.6-1.8 times as long on two cores."""
    return _positive("DEIDLOOP_WORKER_BLAS_THREADS", 1)


def worker_keeps_freed_memory() -> bool:
    """Whether a worker's pool processes keep the memory they free for their next task
    (``DEIDLOOP_WORKER_KEEP_FREED_MEMORY``, default 1; 0 gives it back after each), instead of having its pages
    faulted in and zeroed again by every retrain (``config.memory``)."""
    return os.environ.get("DEIDLOOP_WORKER_KEEP_FREED_MEMORY", "1").strip() not in ("0", "false", "no")


#: Besides its request threads, a web process reaches the database from Channels' thread pool (websocket
#: consumers) and its startup checks: a few more connections each.
WEB_EXTRA_CONNECTIONS = 2
#: The worker's main process (its own thread and its heartbeat thread), next to its pool processes.
WORKER_EXTRA_CONNECTIONS = 2


def database_connections() -> int:
    """Connections ``./deidloop up`` opens at most: every web thread keeps one, every worker process one."""
    return (web_workers() * (web_threads() + WEB_EXTRA_CONNECTIONS)
            + worker_processes() + WORKER_EXTRA_CONNECTIONS)


def memory_bytes() -> int | None:
    """The machine's memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def postgres_settings() -> dict[str, str]:
    """Server settings for the embedded PostgreSQL on a small machine shared with the web and the workers.

    - max_connections: what ``up`` opens (``database_connections``) plus ``DEIDLOOP_PG_SPARE_CONNECTIONS``
      (default 100) for management commands and the test runs sharing the server.
    - shared_buffers: an eighth of the memory, between 32 MiB and 512 MiB (the workers' models need the rest);
      effective_cache_size: half of it; work_mem: 8 MiB (a sort per connection; ranking and record lists
      sort thousands of rows, not millions); maintenance_work_mem: 64 MiB.
    Each can be set instead with ``DEIDLOOP_PG_<NAME>`` (for example ``DEIDLOOP_PG_SHARED_BUFFERS=256MB``).
    """
    memory = memory_bytes() or 2048 * MIB
    shared_buffers = min(max(memory // 8, 32 * MIB), 512 * MIB)
    spare = int(os.environ.get("DEIDLOOP_PG_SPARE_CONNECTIONS", "100"))
    chosen = {
        "max_connections": str(database_connections() + max(0, spare)),
        "shared_buffers": f"{shared_buffers // MIB}MB",
        "effective_cache_size": f"{max(memory // 2, shared_buffers) // MIB}MB",
        "work_mem": "8MB",
        "maintenance_work_mem": "64MB",
    }
    return {name: os.environ.get(f"DEIDLOOP_PG_{name.upper()}", value) for name, value in chosen.items()}
