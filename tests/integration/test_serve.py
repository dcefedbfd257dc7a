"""``python -m config.launcher serve`` (docker-compose.yml's web service): DEIDLOOP_WEB_WORKERS web processes
(uvicorn) answer on one port, and SIGTERM stops them all."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

import requests

from tests.integration.launcher_process import free_port, private_data_folder, start_launcher


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_text().rstrip("\0").split("\0")


def _answered(url: str, *, seconds: float = 120) -> requests.Response:
    deadline = time.monotonic() + seconds
    while True:
        try:
            return requests.get(url, timeout=10)
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_serve_runs_the_web_processes_on_one_port_and_stops_on_sigterm():
    port, data = free_port(), private_data_folder("serve")
    env = {**os.environ, "DEIDLOOP_VAR": str(data), "DEIDLOOP_HOST": "127.0.0.1", "DEIDLOOP_PORT": str(port),
           "DEIDLOOP_WEB_WORKERS": "2", "DJANGO_SETTINGS_MODULE": "config.settings"}
    launcher = start_launcher(["serve"], env, data / "serve.log")
    web: list[int] = []
    try:
        answer = _answered(f"http://127.0.0.1:{port}/login/")
        assert answer.status_code == 200, (data / "serve.log").read_text()[-6000:]  # removed below
        web = _children(launcher.pid)
        assert len(web) == 2
        for pid in web:
            command = _command_line(pid)
            assert command[1:3] == ["-m", "config.webserver"] and "--fd" in command and "--proxy-headers" in command
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=60) == 0, (data / "serve.log").read_text()[-3000:]
        assert not any(Path(f"/proc/{pid}").exists() and "config.webserver" in _command_line(pid) for pid in web)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        for pid in web:  # each in a session of its own: a killed launcher leaves them running
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(data, ignore_errors=True)
