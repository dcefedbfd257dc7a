"""``./deidloop up`` end to end: a cold start in an empty data folder serves the login page and the demo
project, and SIGTERM stops every process it started."""
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

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, seconds: float) -> requests.Response:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return requests.get(url, timeout=5)
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {seconds} s")


def start_up(env: dict, log: Path) -> subprocess.Popen:
    """``./deidloop up``'s launcher with its output (and its children's: Daphne's access log, Celery's) in a
    file. A pipe nobody reads while the test runs fills up after ~64 KB of access log, and then every
    process writing to it — the web server first — blocks: the test would hang on its next request."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as output:
        return subprocess.Popen([sys.executable, "-m", "config.launcher", "up"], cwd=ROOT, env=env,
                                stdout=output, stderr=subprocess.STDOUT, text=True)


def stop(process: subprocess.Popen, log: Path) -> str:
    """SIGTERM, wait for the launcher to stop its children, and return everything it printed so far."""
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=90)
    return log.read_text()


def _pids(pattern: str) -> set[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return {int(pid) for pid in found}


@pytest.mark.slow
def test_up_serves_the_demo_and_stops_cleanly_on_sigterm():
    # Inside the checkout (not /tmp/pytest-of-root, which is private to root) so that PostgreSQL's
    # unprivileged user can reach it when the tests run as root.
    data = ROOT / "var" / f"up-test-{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DEIDLOOP_VAR=str(data), DEIDLOOP_PORT=str(port), DJANGO_SETTINGS_MODULE="config.settings")
    log = ROOT / "var" / f"{data.name}.log"
    process = start_up(env, log)
    try:
        login = wait_for(f"http://127.0.0.1:{port}/login/", 180)
        assert login.status_code == 200 and "Log in" in login.text

        credentials = (data / "credentials.txt").read_text()
        password = re.search(r"^\s*annotator\s+(\S+)$", credentials, re.M).group(1)
        session = requests.Session()
        page = session.get(f"http://127.0.0.1:{port}/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        home = session.post(
            f"http://127.0.0.1:{port}/login/",
            data={"username": "annotator", "password": password, "csrfmiddlewaretoken": token, "next": "/"},
            headers={"Referer": f"http://127.0.0.1:{port}/login/"},
        )
        assert home.status_code == 200
        assert "Demo: synthetic clinical notes" in home.text
        api = session.get(f"http://127.0.0.1:{port}/api/projects/").json()
        assert [project["schema_preset"] for project in api["results"]] == ["MEDDOCAN"]
        # The demo was trained and ranked on first start: the next record comes with the model's suggestions.
        record = session.post(
            f"http://127.0.0.1:{port}/api/projects/{api['results'][0]['id']}/next/",
            headers={"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"http://127.0.0.1:{port}/"},
        ).json()
        suggestions = record["annotation"]["spans"]
        assert suggestions and all(span["origin"] == "model" and 0 < span["confidence"] <= 1 for span in suggestions)

        # A batch of submissions (the demo's batch size is 5) makes the worker retrain and re-rank.
        project_id = api["results"][0]["id"]
        headers = {"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"http://127.0.0.1:{port}/"}
        loop_url = f"http://127.0.0.1:{port}/api/projects/{project_id}/loop/"
        first_model = session.get(loop_url).json()["model"]["id"]
        for _ in range(5):
            submitted = session.post(f"http://127.0.0.1:{port}{record['urls']['submit']}", headers=headers, json={
                "version": record["annotation"]["version"], "spans": record["annotation"]["spans"],
                "active_seconds": 30})
            assert submitted.status_code == 200, submitted.text
            record = session.post(f"http://127.0.0.1:{port}/api/projects/{project_id}/next/", headers=headers).json()
        deadline = time.monotonic() + 120
        while session.get(loop_url).json()["model"]["id"] == first_model:
            assert time.monotonic() < deadline, "no new model two minutes after a full batch"
            time.sleep(0.5)

        # A killed worker is replaced; the site stays up.
        worker_pids = _pids(f"{data}/celerybeat-schedule")
        os.killpg(os.getpgid(min(worker_pids)), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not (_pids(f"{data}/celerybeat-schedule") - worker_pids):
            assert time.monotonic() < deadline, "the worker was not restarted"
            time.sleep(0.5)
        assert session.get(loop_url).status_code == 200

        output = stop(process, log)
        assert process.returncode == 0, output
        assert "stopped" in output and "the worker exited with -9; starting a new one" in output
        assert not (data / "postgres" / "data" / "postmaster.pid").exists()
        assert not (data / "redis" / "redis.pid").exists()
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/login/", timeout=2)

        # A second start reuses the data folder: same accounts, one demo project.
        log.write_text("")
        process = start_up(env, log)
        assert wait_for(f"http://127.0.0.1:{port}/login/", 120).status_code == 200
        assert (data / "credentials.txt").read_text() == credentials
        output = stop(process, log)
        assert process.returncode == 0, output
        assert "created on first run" in output
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # the launcher stops its children itself
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        # Anything left behind by a failure above must not outlive the test.
        pg_ctl = subprocess.run(["pgrep", "-f", str(data)], capture_output=True, text=True).stdout.split()
        for pid in pg_ctl:
            os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(data, ignore_errors=True)
        if log.exists():  # shown by pytest when the test failed
            print(log.read_text()[-8000:])
            log.unlink()
