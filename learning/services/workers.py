"""Which Celery workers are alive, on which hosts, and what they are doing: a heartbeat per worker in Redis.

Remote control, gossip and mingle are off on purpose (``CELERY_WORKER_ENABLE_REMOTE_CONTROL`` in the
settings), so ``celery inspect`` cannot ask the workers. Instead each worker's main process writes, every
``HEARTBEAT_SECONDS``, a key that lives ``HEARTBEAT_TTL`` seconds: a worker that stops — SIGKILLed, its host
gone — drops out within that time by Redis's clock, whatever the hosts' clocks say. The same record is kept
without expiry in a hash, so a worker whose key expired while the hash still holds it was *lost* rather than
never seen: the first live worker to notice (``HDEL`` answers one caller) hands its record to ``on_lost``,
which resumes the retrain jobs the lost worker was working on (``learning.tasks``).

The keys name the database, as deployments (and test runs) may share one Redis.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

import redis
from celery.worker.autoscale import Autoscaler
from django.conf import settings
from django.db import connection, connections

log = logging.getLogger(__name__)

#: How often a worker writes its heartbeat, and how long one lasts: a worker missing for HEARTBEAT_TTL
#: seconds is taken for lost.
HEARTBEAT_SECONDS = 3
HEARTBEAT_TTL = 12

#: How long after taking a task a worker writes its heartbeat.
WAKE_DELAY_SECONDS = 0.1

#: How often each worker runs the loop's watchdog (``Heartbeat``'s ``watchdog``: resume stalled retrains).
WATCHDOG_SECONDS = 60.0


class IdleAutoscaler(Autoscaler):
    """Celery's autoscaler (``--autoscale MAX,MIN``), shrinking the pool once the worker has had no task for
    ``settings.WORKER_IDLE_SECONDS`` (``DEIDLOOP_WORKER_IDLE_SECONDS``) rather than Celery's 30 s: retrains
    a few minutes apart keep their pool processes, and with them the features and model they hold."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["keepalive"] = settings.WORKER_IDLE_SECONDS
        super().__init__(*args, **kwargs)

#: A worker stopped normally says so; one lost is remembered this long in the hash at most.
FORGET_AFTER_SECONDS = 24 * 3600

_clients = threading.local()


def _redis() -> redis.Redis:
    """This thread's Redis client (a forked process makes its own: redis-py checks the pid)."""
    client = getattr(_clients, "client", None)
    if client is None:
        client = _clients.client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5,
                                                        socket_connect_timeout=5)
    return client


def _prefix() -> str:
    return f"deidloop:workers:{connection.settings_dict['NAME']}"


def _live_key(worker_id: str) -> str:
    return f"{_prefix()}:live:{worker_id}"


def _known_key() -> str:
    return f"{_prefix()}:known"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# Writing ---------------------------------------------------------------------------------------------------

def publish(record: dict[str, Any]) -> None:
    """Write a worker's heartbeat: ``record`` has at least ``host`` and ``pid``."""
    worker_id = f"{record['host']}:{record['pid']}"
    payload = json.dumps({**record, "last_seen": now_iso()})
    pipe = _redis().pipeline()
    pipe.set(_live_key(worker_id), payload, ex=HEARTBEAT_TTL)
    pipe.hset(_known_key(), worker_id, payload)
    pipe.execute()


def withdraw(host: str, pid: int) -> None:
    """A worker that stops normally leaves: it is neither live nor lost."""
    worker_id = f"{host}:{pid}"
    pipe = _redis().pipeline()
    pipe.delete(_live_key(worker_id))
    pipe.hdel(_known_key(), worker_id)
    pipe.execute()


def claim_lost() -> list[dict[str, Any]]:
    """The last heartbeats of the workers lost since the last call (of any worker): each is handed to one
    caller only, as ``HDEL`` removes it for the first. Records too old to act on are dropped."""
    client = _redis()
    known = client.hgetall(_known_key())
    if not known:
        return []
    ids = [worker_id.decode() for worker_id in known]
    pipe = client.pipeline()
    for worker_id in ids:
        pipe.exists(_live_key(worker_id))
    alive = pipe.execute()
    lost = []
    for worker_id, is_alive in zip(ids, alive):
        if is_alive or not client.hdel(_known_key(), worker_id):
            continue
        record = json.loads(known[worker_id.encode()])
        if _age_seconds(record.get("last_seen")) < FORGET_AFTER_SECONDS:
            lost.append(record)
    return lost


def unclaim(records: list[dict[str, Any]]) -> None:
    """Give lost workers' records back, for their work to be resumed at a later try."""
    _redis().hset(_known_key(), mapping={f"{record['host']}:{record['pid']}": json.dumps(record)
                                         for record in records})


def _age_seconds(moment: str | None) -> float:
    try:
        return (datetime.now(timezone.utc) - datetime.fromisoformat(moment)).total_seconds()
    except (TypeError, ValueError):
        return float("inf")


# Reading ---------------------------------------------------------------------------------------------------

def live_workers() -> list[dict[str, Any]]:
    """The heartbeats of the live workers, by host and pid."""
    client = _redis()
    keys = sorted(client.scan_iter(match=f"{_prefix()}:live:*", count=500))
    records = [json.loads(value) for value in client.mget(keys) if value] if keys else []
    return sorted(records, key=lambda record: (record["host"], record["pid"]))


def queue_lengths(queues: Iterable[str]) -> dict[str, int]:
    """Messages waiting in each queue, not counting those a worker has taken (the Redis list named after the
    queue; no task here is sent with a priority, which kombu would keep in lists of their own)."""
    names = sorted(set(queues))
    pipe = _redis().pipeline()
    for name in names:
        pipe.llen(name)
    return dict(zip(names, pipe.execute()))


# The heartbeat of a worker -----------------------------------------------------------------------------------

def describe_worker(consumer) -> dict[str, Any]:
    """What a worker's heartbeat says: its host, main pid, node name, queues, pool processes and the tasks
    its pool runs now (Celery's own request records: ``Request.info``)."""
    from celery.worker import state

    running, reserved = [], []
    for _ in range(3):  # the worker's own thread changes the sets while they are read
        try:
            running = [request.info() for request in list(state.active_requests)]
            reserved = [request.info() for request in list(state.reserved_requests)]
            break
        except RuntimeError:
            continue
    started = {info["id"] for info in running}
    try:
        processes = list(consumer.pool.info.get("processes", []))
    except Exception:  # noqa: BLE001 - a pool being restarted has no processes to list
        processes = []
    try:
        queues = sorted(queue.name for queue in consumer.task_consumer.queues)
    except Exception:  # noqa: BLE001 - not consuming yet (or any more)
        queues = [settings.CELERY_TASK_DEFAULT_QUEUE]
    return {
        "host": socket.gethostname(), "pid": os.getpid(), "node": consumer.hostname, "queues": queues,
        "processes": processes,
        "running": [_task(info) for info in running],
        # Taken from the broker, not started yet: lost with the worker as well (unacknowledged).
        "reserved": [_task(info) for info in reserved if info["id"] not in started],
    }


def _task(info: dict[str, Any]) -> dict[str, Any]:
    """A task as a heartbeat shows it: its name and its scalar arguments (a shard's job and attempt, not its
    list of records)."""
    args = [arg for arg in info.get("args") or () if isinstance(arg, (int, str))]
    return {"task": info["name"], "id": info["id"], "args": args, "pid": info["worker_pid"],
            "since": _iso(info["time_start"])}


def _iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds") if epoch else None


class Heartbeat(threading.Thread):
    """Writes the worker's heartbeat every HEARTBEAT_SECONDS, hands lost workers' records to ``on_lost`` and
    calls ``watchdog`` every WATCHDOG_SECONDS (it resumes stalled retrains: every worker does, in this thread
    of its main process, so that no scheduler process has to run and an idle worker gets no message; a
    resumed job is claimed once however many workers ask).

    A Redis or database that is away is logged and tried again at the next beat: the thread never ends
    before the worker does. Lost workers are looked for only once this worker's heartbeats have gone through
    for HEARTBEAT_TTL seconds in a row: after Redis was away (restarted), every worker's key may have expired,
    and the others need a beat to write theirs again before any is taken for lost."""

    def __init__(self, consumer, on_lost: Callable[[list[dict[str, Any]]], None],
                 watchdog: Callable[[], Any] | None = None) -> None:
        super().__init__(name="deidloop-heartbeat", daemon=True)
        self.consumer, self.on_lost, self.watchdog = consumer, on_lost, watchdog
        self.watched_at: float | None = None  # the first beat runs the watchdog: the worker's start
        self.started_at = now_iso()
        self.stopping, self.woken = threading.Event(), threading.Event()
        self.published_since: float | None = None

    def wake(self) -> None:
        """Write the heartbeat now rather than at the next beat: the worker took a task, and should it die
        with it, its last heartbeat must name it."""
        self.woken.set()

    def beat(self) -> None:
        try:
            publish({**describe_worker(self.consumer), "started_at": self.started_at})
        except Exception:
            self.published_since = None
            raise
        self.published_since = self.published_since or time.monotonic()
        if time.monotonic() - self.published_since < HEARTBEAT_TTL:
            return
        lost = claim_lost()
        if lost:
            for record in lost:
                log.warning("worker %s on %s (pid %s) stopped sending heartbeats; resuming its work",
                            record.get("node"), record["host"], record["pid"])
            try:
                self.on_lost(lost)
            except Exception:
                unclaim(lost)  # the next beat (here or on another worker) tries again
                raise
            finally:
                connections.close_all()  # the main process forks pool processes: keep no connection open

    def run(self) -> None:
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                self.beat()
            except Exception as error:  # noqa: BLE001 - see the class's docstring
                log.warning("could not write the worker's heartbeat (will retry): %s", error)
            if self.watchdog is not None and (self.watched_at is None
                                              or started - self.watched_at >= WATCHDOG_SECONDS):
                try:
                    self.watchdog()
                    self.watched_at = started
                except Exception as error:  # noqa: BLE001 - the database or broker is away: the next beat retries
                    log.warning("the loop's watchdog could not run (will retry): %s", error)
            if self.woken.wait(max(0.0, HEARTBEAT_SECONDS - (time.monotonic() - started))):
                # Woken as the worker takes a task (Celery's task_received comes just before the task is
                # listed among the reserved ones), and often several at once: write the heartbeat a moment later.
                self.stopping.wait(WAKE_DELAY_SECONDS)
                self.woken.clear()

    def stop(self) -> None:
        self.stopping.set()
        self.woken.set()
        self.join(timeout=HEARTBEAT_SECONDS + 5)
        try:
            withdraw(socket.gethostname(), os.getpid())
        except Exception as error:  # noqa: BLE001 - its key expires by itself
            log.warning("could not withdraw the worker's heartbeat: %s", error)
