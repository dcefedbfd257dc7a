"""``./deidloop up`` end to end: a cold start in an empty data folder serves the login page at once while the
worker trains the demo's first model, and SIGTERM stops every process it started.

Deterministic on a loaded machine: every step waits for a readiness signal (the login page, the demo's
model on ``/api/projects/{id}/loop/``, a new worker's pid) with a generous deadline, and a failure shows the
launcher's log (its output and its children's go to a file)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest
import requests

from tests.integration.launcher_process import (
    environment, free_port, kill_leftovers, log_in, postgres_running, private_data_folder, redis_running,
    remove_data_folder, start_launcher, stop, wait_for_page, wait_until,
)

#: Deadlines: far above what a loaded two-core machine needs, so that only a real failure reaches them.
SERVING_SECONDS = 300
MODEL_SECONDS = 420


def _worker_pids(launcher: subprocess.Popen) -> set[int]:
    """The Celery worker the launcher started (its child; the pool processes are the worker's)."""
    found = subprocess.run(["pgrep", "-P", str(launcher.pid), "-f", "celery -A config worker"],
                           capture_output=True, text=True).stdout.split()
    return {int(pid) for pid in found}


@pytest.mark.slow
def test_up_serves_the_demo_and_stops_cleanly_on_sigterm():
    data = private_data_folder("up-test")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(data, port)
    log = data.parent / f"{data.name}.log"
    started = time.monotonic()
    process = start_launcher(["up"], env, log)
    try:
        login = wait_for_page(f"{base}/login/", seconds=SERVING_SECONDS, process=process, log=log)
        assert login.status_code == 200 and "Log in" in login.text
        serving_after = time.monotonic() - started

        credentials = (data / "credentials.txt").read_text()
        session = log_in(base, data, "annotator")
        lead = log_in(base, data, "lead")  # the loop's state (the model, costs) is the leads'
        home = session.get(f"{base}/")
        assert "Demo: synthetic clinical notes" in home.text
        api = session.get(f"{base}/api/projects/").json()
        assert [project["schema_preset"] for project in api["results"]] == ["MEDDOCAN"]
        project_id = api["results"][0]["id"]
        headers = {"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"{base}/"}
        loop_url = f"{base}/api/projects/{project_id}/loop/"

        # The site serves before the demo's first model exists: the worker trains it, queued at start. While
        # it does, the project page says so (seen here when the model was still missing after the page).
        project_page = session.get(f"{base}/projects/{project_id}/").text
        if lead.get(loop_url).json()["model"] is None:
            assert "First model training" in project_page
        model = wait_until(lambda: lead.get(loop_url).json()["model"], seconds=MODEL_SECONDS, log=log,
                           what="the demo's first model (queued by `up` for the worker) was not ready")
        model_after = time.monotonic() - started
        output = log.read_text()
        trained = re.search(r"Task learning\.retrain\[[^\]]+\] succeeded", output)
        assert "first model queued" in output and trained, output[-6000:]
        assert output.index("serving on") < trained.start(), "the site waited for the first model"

        # The next record comes with the first model's suggestions.
        record = session.post(f"{base}/api/projects/{project_id}/next/", headers=headers).json()
        suggestions = record["annotation"]["spans"]
        assert suggestions and all(span["origin"] == "model" and 0 < span["confidence"] <= 1 for span in suggestions)

        # A batch of submissions (the demo's batch size is 5) makes the worker retrain and re-rank.
        first_model_id = model["id"]
        for _ in range(5):
            submitted = session.post(f"{base}{record['urls']['submit']}", headers=headers, json={
                "version": record["annotation"]["version"], "spans": record["annotation"]["spans"],
                "active_seconds": 30})
            assert submitted.status_code == 200, submitted.text
            record = session.post(f"{base}/api/projects/{project_id}/next/", headers=headers).json()
        wait_until(lambda: lead.get(loop_url).json()["model"]["id"] != first_model_id, seconds=MODEL_SECONDS,
                   log=log, what="no new model after a full batch of submissions")

        # A killed worker is replaced; the site stays up.
        worker_pids = _worker_pids(process)
        assert len(worker_pids) == 1, log.read_text()[-6000:]
        os.killpg(os.getpgid(min(worker_pids)), signal.SIGKILL)
        wait_until(lambda: _worker_pids(process) - worker_pids, seconds=120, log=log,
                   what="the killed worker was not replaced")
        assert lead.get(loop_url).status_code == 200

        output = stop(process, log)
        assert process.returncode == 0, output[-6000:]
        assert "stopped" in output and "the worker exited with -9; starting a new one" in output
        assert not postgres_running(data) and not redis_running(data)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{base}/login/", timeout=2)

        # A second start reuses the data folder: same accounts, one demo project, its model.
        log.write_text("")
        process = start_launcher(["up"], env, log)
        assert wait_for_page(f"{base}/login/", seconds=SERVING_SECONDS, process=process, log=log).status_code == 200
        assert (data / "credentials.txt").read_text() == credentials
        output = stop(process, log)
        assert process.returncode == 0, output[-6000:]
        assert "created on first run" in output and "first model queued" not in output
        print(f"up served after {serving_after:.1f} s; the demo's first model was ready after {model_after:.1f} s")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # the launcher stops its children itself
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        kill_leftovers(data)  # anything left behind by a failure above must not outlive the test
        remove_data_folder(data)
        if log.exists():  # shown by pytest when the test failed
            print(log.read_text()[-8000:])
            log.unlink()
