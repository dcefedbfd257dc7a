"""Helpers for tests that run ``python -m config.launcher`` (``./deidloop up``, ``./deidloop manage``) in
subprocesses on a private data folder (``DEIDLOOP_VAR``), so that they never touch the services of ``var/``.

Every wait here waits for a readiness signal with a generous deadline (a loaded two-core machine is slow,
not broken) and fails with the launcher's log, never after a fixed sleep.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import requests

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def private_data_folder(prefix: str) -> Path:
    """Inside the checkout (not /tmp/pytest-of-root, which is private to root), so that PostgreSQL's
    unprivileged user can reach it when the tests run as root — unless the checkout itself is private (a
    clone in a ``mktemp -d`` folder): PostgreSQL's data then lives in a folder of its own (``postgres_home``)."""
    return ROOT / "var" / f"{prefix}-{uuid.uuid4().hex[:8]}"


def environment(data: Path, port: int) -> dict[str, str]:
    """The environment of a launcher on ``data``: its own embedded services (never the test run's)."""
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DEIDLOOP_VAR=str(data), DEIDLOOP_PORT=str(port), DJANGO_SETTINGS_MODULE="config.settings")
    return env


def start_launcher(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """``python -m config.launcher ARGS`` with its output (and its children's: uvicorn's access log, Celery's)
    in a file. A pipe nobody reads while the test runs fills up after ~64 KB of access log, and then every
    process writing to it — the web server first — blocks: the test would hang on its next request."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as output:
        return subprocess.Popen([sys.executable, "-m", "config.launcher", *args], cwd=ROOT, env=env,
                                stdout=output, stderr=subprocess.STDOUT, text=True)


def run_launcher(args: list[str], env: dict, *, seconds: float = 300) -> subprocess.CompletedProcess:
    """``python -m config.launcher ARGS`` to its end, output captured."""
    return subprocess.run([sys.executable, "-m", "config.launcher", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=seconds)


def log_tail(log: Path, chars: int = 6000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"


def wait_for_page(url: str, *, seconds: float, process: subprocess.Popen | None = None,
                  log: Path | None = None) -> requests.Response:
    """The first answer of ``url``; fails early, with the log, when the launcher exits meanwhile."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the launcher exited with {process.returncode} before {url} answered; "
                                 f"its log:\n{log_tail(log) if log else ''}")
        try:
            return requests.get(url, timeout=10)
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {seconds} s; the launcher's log:\n"
                         f"{log_tail(log) if log else ''}")


def wait_until(condition, *, seconds: float, what: str, log: Path | None = None, every: float = 0.5):
    """Poll ``condition()`` until it returns something true (returned); fail saying ``what`` did not happen."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            shown = f"; the launcher's log:\n{log_tail(log)}" if log else ""
            raise AssertionError(f"{what} within {seconds} s{shown}")
        time.sleep(every)


def log_in(base: str, data: Path, username: str) -> requests.Session:
    """A session logged in with the password ``bootstrap`` wrote to the data folder; at the first login, the
    site asks for a new password first, and gets one (the credentials file keeps the first; a later login in
    the same data folder uses the new one)."""
    credentials = (data / "credentials.txt").read_text()
    password = re.search(rf"^\s*{username}\s+(\S+)$", credentials, re.M).group(1)
    session = requests.Session()
    for tried in (password, f"{password}-changed"):
        page = session.get(f"{base}/login/", timeout=30)
        home = session.post(
            f"{base}/login/",
            data={"username": username, "password": tried, "csrfmiddlewaretoken": _csrf_token(page), "next": "/"},
            headers={"Referer": f"{base}/login/"}, timeout=30,
        )
        assert home.status_code == 200, home.text[:2000]
        if urlsplit(home.url).path != "/login/":
            break
    assert urlsplit(home.url).path != "/login/", f"{username} could not log in: {home.text[:2000]}"
    if urlsplit(home.url).path == "/password_change/":
        new_password = f"{password}-changed"
        home = session.post(
            f"{base}/password_change/",
            data={"old_password": password, "new_password1": new_password, "new_password2": new_password,
                  "csrfmiddlewaretoken": _csrf_token(home)},
            headers={"Referer": f"{base}/password_change/"}, timeout=30,
        )
        assert home.status_code == 200 and urlsplit(home.url).path == "/", home.text[:2000]
    return session


def _csrf_token(page: requests.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)


def stop(process: subprocess.Popen, log: Path, *, seconds: float = 120) -> str:
    """SIGTERM, wait for the launcher to stop its children, and return everything it printed so far."""
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=seconds)
    return log.read_text()


def postgres_home(data: Path) -> Path:
    """Where the launcher on ``data`` keeps PostgreSQL: ``data/postgres``, or the folder outside a private
    checkout that ``config.embedded`` recorded for it (``services/postgres.folder``)."""
    record = data / "services" / "postgres.folder"
    return Path(record.read_text().strip()) if record.exists() else data / "postgres"


def postgres_running(data: Path) -> bool:
    return (postgres_home(data) / "data" / "postmaster.pid").exists()


def redis_running(data: Path) -> bool:
    return (data / "redis" / "redis.pid").exists()


def remove_data_folder(data: Path) -> None:
    """``data``, and PostgreSQL's folder outside it when the checkout is private."""
    home = postgres_home(data)
    if not home.is_relative_to(data):
        shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)


def kill_leftovers(data: Path) -> None:
    """Whatever a failure left running on ``data`` must not outlive the test: processes whose command line
    names the folder (PostgreSQL, the worker, a waiting command) and the Redis server of its pid file."""
    pids = set()
    for folder in {data, postgres_home(data)}:
        found = subprocess.run(["pgrep", "-f", str(folder)], capture_output=True, text=True).stdout.split()
        pids |= {int(pid) for pid in found}
    pid_file = data / "redis" / "redis.pid"
    if pid_file.exists() and pid_file.read_text().strip().isdigit():
        pids.add(int(pid_file.read_text().strip()))
    for pid in pids - {os.getpid()}:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
