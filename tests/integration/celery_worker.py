"""A real Celery worker for integration tests: a separate process on the embedded Redis, reading and
writing the test database, on a queue of its own so nothing else's messages reach it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The URL of the database the tests use (pytest-django's test database)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class Worker:
    """``celery worker`` with ``processes`` pool processes; its log goes to ``log_path``.

    ``command`` replaces the command line (its queue is still ``queue``, the default queue of the settings),
    and ``environment`` adds to the worker's environment (``REDIS_URL``, say)."""

    def __init__(self, *, queue: str, data_dir: Path, log_path: Path, processes: int = 1,
                 command: list[str] | None = None, environment: dict[str, str] | None = None) -> None:
        self.queue, self.data_dir, self.log_path, self.processes = queue, data_dir, log_path, processes
        self.command, self.environment = command, environment or {}
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> "Worker":
        from django.conf import settings

        # The secret is the installation's: the worker checks the models the tests' process signed with it.
        env = {**os.environ, "DATABASE_URL": database_url(), "DEIDLOOP_QUEUE": self.queue,
               "DEIDLOOP_DATA_DIR": str(self.data_dir), "PYTHONUNBUFFERED": "1", "SECRET_KEY": settings.SECRET_KEY,
               **self.environment}
        self._log = self.log_path.open("ab")
        offset = self.log_path.stat().st_size
        command = self.command or [
            sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "--pool", "prefork",
            "--concurrency", str(self.processes), "-Q", self.queue,
            "--hostname", f"test-{uuid.uuid4().hex[:8]}@%h", "--without-gossip", "--without-mingle"]
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the worker exited with {self.process.returncode}:\n{self.log()}")
            with self.log_path.open("rb") as handle:
                handle.seek(offset)
                if b" ready." in handle.read():
                    return self
            time.sleep(0.1)
        raise RuntimeError(f"the worker did not start within {timeout} s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once, as an out-of-memory killer or a crash would."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self._log.close()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        if not self._log.closed:
            self._log.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]


def launcher_worker(*, redis_url: str, folder: Path, queue: str) -> Worker:
    """The worker ``./deidloop up`` runs (``config.launcher.worker_command``, as the environment sizes it) with
    the probe tasks of ``tests.integration.broker_probe``, on ``redis_url``; its data and log in ``folder``.
    Not started."""
    from config.launcher import worker_command

    return Worker(queue=queue, data_dir=folder / "data", log_path=folder / "worker.log",
                  command=[*worker_command(), "--include", "tests.integration.broker_probe"],
                  environment={"REDIS_URL": redis_url})


def wait_for(predicate, timeout: float, worker: Worker | None, what: str):
    """Poll ``predicate`` until it returns something true (returned) or ``timeout`` seconds pass (an
    AssertionError, with the worker's log when there is one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}"
                         + (f"; worker log:\n{worker.log()}" if worker is not None else ""))
