"""Latency of the workbench's two calls, "next record" and "submit", on the stack ``./deidloop up`` runs.

Starts ``python -m config.launcher up`` on a fresh data folder and a free port, seeds it (MEDDOCAN train as an
unannotated pool of 500 records, a current ranking whose suggestions are the gold spans with random
confidences, 20 annotator accounts), then drives the JSON API as annotators do: log in through the form,
``POST /api/projects/<id>/next/``, then ``POST`` the submit URL with the suggestions (some dropped, some
relabelled) and the version. First each call on its own (``per_endpoint``: the login page, next with a record
open, the record, its annotations, a draft save; p50 and the web processes' CPU per request), then one
annotator, then 20 at once (threads). The reference, measured in
the same run, is ``GET /login/`` (a page that touches no table), so the figures can be read as ratios on
a noisy shared machine. The stack is stopped with SIGTERM at the end, also when something fails.

Prints one JSON line. Goals: one annotator p95 next and submit <= 30 ms; 20 annotators p95 next < 100 ms,
submit < 150 ms, >= 135 requests/s, no errors, nothing lost.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"
PASSWORD = "bench-" + uuid.uuid4().hex[:12]


@contextmanager
def measured(stack: "Stack", result: dict):
    """The block measures on ``stack`` into ``result``; a failure is noted there (the stack's log on stderr),
    and whatever happened the stack is stopped and ``result`` printed as one JSON line."""
    try:
        yield
    except Exception as error:
        result["failed"] = f"{type(error).__name__}: {error}"
        print(stack.log_tail() if stack.data.exists() else "", file=sys.stderr)
    finally:
        result["stopped_cleanly"] = stack.stop()
        print(json.dumps(result))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


class Stack:
    """``python -m config.launcher up`` in a subprocess, on its own data folder, ports and log."""

    def __init__(self, *, web_workers: int | None, web_threads: int | None) -> None:
        self.data = ROOT / "var" / f"bench-latency-{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
        self.env.update(
            DEIDLOOP_VAR=str(self.data), DEIDLOOP_PORT=str(self.port), DEIDLOOP_PG_PORT=str(free_port()),
            DEIDLOOP_REDIS_PORT=str(free_port()), DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING",
        )
        if web_workers is not None:
            self.env["DEIDLOOP_WEB_WORKERS"] = str(web_workers)
        if web_threads is not None:
            self.env["DEIDLOOP_WEB_THREADS"] = str(web_threads)
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, *, seconds: float = 300) -> None:
        self.data.mkdir(parents=True)
        self.log = (self.data / "launcher.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "config.launcher", "up"], cwd=ROOT, env=self.env,
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the launcher exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if requests.get(f"{self.base}/login/", timeout=10).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.base}/login/ did not answer within {seconds} s:\n{self.log_tail()}")

    def manage(self, *args: str) -> str:
        """``./deidloop manage ARGS`` against this stack's services (they are running, so it leaves them be)."""
        result = subprocess.run(
            [sys.executable, "-m", "config.launcher", "manage", *args], cwd=ROOT, env=self.env,
            capture_output=True, text=True, timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time used so far by the web processes, by PostgreSQL's server processes and by the Celery worker
        (the retrains the submissions ask for), and by this process (the clients): a measure of the work per
        request that other load on the machine does not inflate as much as latency."""
        web = self._web_pids()
        postmaster = int((self.data / "postgres" / "data" / "postmaster.pid").read_text().split()[0])
        workers = [pid for pid in _children(self.process.pid)
                   if b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        total = {"web": 0.0, "postgres": _cpu_seconds(postmaster, reaped_children=True),
                 "worker": sum(_cpu_seconds(pid, reaped_children=True) for pid in workers),
                 "clients": _cpu_seconds(os.getpid())}
        for name, pids in (("web", web), ("postgres", _children(postmaster)),
                           ("worker", [child for pid in workers for child in _children(pid)])):
            for pid in pids:
                try:
                    total[name] += _cpu_seconds(pid)
                except OSError:  # exited meanwhile
                    pass
        return total

    def _web_pids(self) -> list[int]:
        return [pid for pid in _children(self.process.pid)
                if b"config.webserver" in Path(f"/proc/{pid}/cmdline").read_bytes()]

    def web_processes(self) -> int:
        return len(self._web_pids())

    def log_tail(self) -> str:
        return (self.data / "launcher.log").read_text(errors="replace")[-3000:]

    def stop(self) -> bool:
        """SIGTERM, as Ctrl-C would; True when the launcher stopped by itself with status 0."""
        clean = False
        try:
            if self.process is not None and self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    clean = self.process.wait(timeout=90) == 0
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            # Whatever a failure left running on this data folder must not outlive the benchmark.
            leftovers = subprocess.run(["pgrep", "-f", str(self.data)], capture_output=True, text=True).stdout
            for pid in leftovers.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if getattr(self, "log", None) is not None:
                self.log.close()
            shutil.rmtree(self.data, ignore_errors=True)
        return clean


def _cpu_seconds(pid: int, *, reaped_children: bool = False) -> float:
    """User + system CPU of a process; with ``reaped_children`` also that of its children that have exited
    (PostgreSQL's backends for connections that were closed)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if reaped_children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError):
                pass
    return found


def log_in(base: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(
        f"{base}/login/", data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/login/"}, allow_redirects=False,
    )
    if response.status_code != 302:
        raise RuntimeError(f"{username} could not log in: {response.status_code}")
    home = session.get(f"{base}/", allow_redirects=False)
    if home.status_code == 302 and home.headers["Location"].startswith("/password_change/"):
        # A first-run account must choose its own password before anything else.
        form = session.get(f"{base}/password_change/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        changed = session.post(
            f"{base}/password_change/", allow_redirects=False,
            data={"old_password": password, "new_password1": f"{password}-bench",
                  "new_password2": f"{password}-bench", "csrfmiddlewaretoken": token},
            headers={"Referer": f"{base}/password_change/"},
        )
        if changed.status_code != 302:
            raise RuntimeError(f"{username} could not change the first-run password: {changed.status_code}")
    session.headers.update({"X-CSRFToken": session.cookies["csrftoken"], "Referer": f"{base}/"})
    return session


@dataclass
class Tally:
    next_seconds: list[float] = field(default_factory=list)
    submit_seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    submitted: int = 0
    handed_out: list[int] = field(default_factory=list)
    dropped: int = 0
    relabelled: int = 0
    pool_empty: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def corrected(spans: list[dict], labels: list[str], rng: random.Random, tally: Tally) -> list[dict]:
    """What an annotator sends back: most suggestions kept, about 10 % dropped, about 5 % relabelled."""
    final = []
    for span in spans:
        draw = rng.random()
        if draw < 0.10:
            tally.dropped += 1
            continue
        label = span["label"]
        if draw < 0.15:
            label = rng.choice([other for other in labels if other != label] or [label])
            tally.relabelled += 1
        final.append({"start": span["start"], "end": span["end"], "label": label, "origin": "human"})
    return final


def cycle(session: requests.Session, base: str, project_id: int, rng: random.Random, tally: Tally) -> bool:
    """One next + submit; False when the pool is empty or a call failed."""
    started = time.perf_counter()
    response = session.post(f"{base}/api/projects/{project_id}/next/")
    elapsed = time.perf_counter() - started
    with tally.lock:
        tally.next_seconds.append(elapsed)
    if response.status_code == 204:
        tally.pool_empty = True
        return False
    if not response.ok:
        with tally.lock:
            tally.errors.append(f"next {response.status_code}")
        return False
    payload = response.json()
    with tally.lock:
        spans = corrected(payload["annotation"]["spans"], payload["project"]["labels"], rng, tally)
        tally.handed_out.append(payload["document"]["id"])
    body = {"version": payload["annotation"]["version"], "spans": spans,
            "active_seconds": round(rng.uniform(20, 120), 1)}
    started = time.perf_counter()
    response = session.post(f"{base}{payload['urls']['submit']}", json=body)
    elapsed = time.perf_counter() - started
    with tally.lock:
        tally.submit_seconds.append(elapsed)
        if response.ok:
            tally.submitted += 1
        else:
            tally.errors.append(f"submit {response.status_code}")
    return response.ok


def run_annotators(stack: Stack, sessions: list[requests.Session], project_id: int, *, cycles: int,
                   seconds: float, seed: int) -> dict:
    base = stack.base
    tally = Tally()
    remaining = [cycles]
    deadline = time.monotonic() + seconds
    barrier = threading.Barrier(len(sessions))

    def work(index: int, session: requests.Session) -> None:
        rng = random.Random(seed * 1000 + index)
        barrier.wait()
        while time.monotonic() < deadline:
            with tally.lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            try:
                if not cycle(session, base, project_id, rng, tally) and tally.pool_empty:
                    return
            except requests.RequestException as error:
                with tally.lock:
                    tally.errors.append(type(error).__name__)

    threads = [threading.Thread(target=work, args=(i, s)) for i, s in enumerate(sessions)]
    cpu_before = stack.cpu_seconds()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu_after = stack.cpu_seconds()
    requests_made = len(tally.next_seconds) + len(tally.submit_seconds)
    return {
        "annotators": len(sessions),
        "cycles": len(tally.submit_seconds),
        "seconds": round(wall, 2),
        "requests_per_second": round(requests_made / wall, 1),
        "next_p50_ms": ms(percentile(tally.next_seconds, 50)),
        "next_p95_ms": ms(percentile(tally.next_seconds, 95)),
        "submit_p50_ms": ms(percentile(tally.submit_seconds, 50)),
        "submit_p95_ms": ms(percentile(tally.submit_seconds, 95)),
        "errors": len(tally.errors),
        "error_kinds": sorted(set(tally.errors)),
        "submitted": tally.submitted,
        "duplicate_handouts": len(tally.handed_out) - len(set(tally.handed_out)),
        "spans_dropped": tally.dropped,
        "spans_relabelled": tally.relabelled,
        "pool_ran_dry": tally.pool_empty,
        "think_time_seconds": 0,
        "web_cpu_ms_per_request": round((cpu_after["web"] - cpu_before["web"]) / requests_made * 1000, 2),
        **{f"{name}_cpu_ms_per_request": round((cpu_after[name] - cpu_before[name]) / requests_made * 1000, 2)
           for name in ("postgres", "worker", "clients")},
    }


def per_endpoint(stack: Stack, session: requests.Session, project_id: int, n: int) -> dict:
    """Each call the workbench and the API make, ``n`` times in a row by one client: p50 latency and the web
    processes' CPU per request (what the server, the middleware and the view cost, whatever else runs)."""
    base = stack.base
    handed = session.post(f"{base}/api/projects/{project_id}/next/").json()
    annotation, document = handed["annotation"], handed["document"]["id"]
    version = [annotation["version"]]

    def save_draft() -> requests.Response:
        response = session.put(f"{base}/api/annotations/{annotation['id']}/draft/",
                               json={"spans": annotation["spans"], "version": version[0]})
        if response.ok:
            version[0] = response.json()["version"]
        return response

    calls = {
        "login_page": lambda: session.get(f"{base}/login/"),
        "next_open_record": lambda: session.post(f"{base}/api/projects/{project_id}/next/"),
        "document": lambda: session.get(f"{base}/api/projects/{project_id}/documents/{document}/"),
        "annotations_of_document": lambda: session.get(
            f"{base}/api/projects/{project_id}/annotations/?document={document}"),
        "draft_save": save_draft,
    }
    figures = {}
    for name, call in calls.items():
        for _ in range(5):  # warm
            call().raise_for_status()
        times = []
        cpu_before = stack.cpu_seconds()
        for _ in range(n):
            started = time.perf_counter()
            response = call()
            times.append(time.perf_counter() - started)
            response.raise_for_status()
        cpu_after = stack.cpu_seconds()
        figures[name] = {
            "p50_ms": ms(percentile(times, 50)),
            "web_cpu_ms": round((cpu_after["web"] - cpu_before["web"]) / n * 1000, 2),
            "postgres_cpu_ms": round((cpu_after["postgres"] - cpu_before["postgres"]) / n * 1000, 2),
        }
    return figures


def floor(session: requests.Session, base: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        response = session.get(f"{base}/login/")
        times.append(time.perf_counter() - started)
        response.raise_for_status()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--single-cycles", type=int, default=100)
    parser.add_argument("--concurrent-cycles", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=60.0, help="time bound of each phase")
    parser.add_argument("--web-workers", type=int, default=None,
                        help="DEIDLOOP_WEB_WORKERS for the launcher (its default when not given)")
    parser.add_argument("--web-threads", type=int, default=None,
                        help="DEIDLOOP_WEB_THREADS for each web process (its default when not given)")
    parser.add_argument("--endpoint-calls", type=int, default=200,
                        help="calls of each endpoint in the per-endpoint phase")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--completed-ahead", type=int, default=None,
                        help="records whose suggestions are completed before the run, as a worker completes a new "
                             "ranking's first records (default: every record; 0: each is completed at hand-out)")
    options = parser.parse_args()
    corpus = SHARED / "meddocan" / "train"

    stack = Stack(web_workers=options.web_workers, web_threads=options.web_threads)
    # In the live loop each new ranking's first records are completed by the worker (learning.services.completion)
    # and the hand-outs between two rankings come from them; the stand-in ranking here is never replaced.
    ahead = 10**6 if options.completed_ahead is None else options.completed_ahead
    result: dict = {"benchmark": "workbench_latency", "corpus": "meddocan/train",
                    "completed_ahead": "all" if options.completed_ahead is None else ahead}
    with measured(stack, result):
        started = time.perf_counter()
        stack.start()
        result["startup_seconds"] = round(time.perf_counter() - started, 1)
        seeded = json.loads(stack.manage(
            "seed_benchmark", str(corpus), "--annotators", str(options.annotators), "--password", PASSWORD,
            "--seed", str(options.seed), "--completed-ahead", str(ahead),
        ).strip().splitlines()[-1])
        project_id = seeded["project_id"]
        result.update(documents=seeded["documents"], suggested_spans=seeded["suggested_spans"],
                      suggestions="gold spans as stand-ins")
        sessions = [log_in(stack.base, name, PASSWORD) for name in seeded["annotators"]]

        # Warm up: the first requests of each process import and compile what the rest reuse.
        floor(sessions[0], stack.base, 20)
        floor_before = floor(sessions[0], stack.base, 50)
        endpoints = per_endpoint(stack, sessions[-1], project_id, options.endpoint_calls)
        single = run_annotators(stack, sessions[:1], project_id, cycles=options.single_cycles,
                                seconds=options.seconds, seed=options.seed)
        concurrent = run_annotators(stack, sessions, project_id, cycles=options.concurrent_cycles,
                                    seconds=options.seconds, seed=options.seed + 1)
        floor_after = floor(sessions[0], stack.base, 50)
        floor_p50 = percentile(floor_before + floor_after, 50)

        stored = int(stack.manage(
            "shell", "-c",
            "from annotator.models import Annotation; print(Annotation.objects.filter("
            f"annotator__username__startswith='bench', state='submitted', document__project_id={project_id}).count())",
        ).strip().splitlines()[-1])
        submitted = single["submitted"] + concurrent["submitted"]
        for phase in (single, concurrent):
            for kind in ("next", "submit"):
                phase[f"{kind}_p50_over_floor"] = round(phase[f"{kind}_p50_ms"] / ms(floor_p50), 1)
        result.update(
            web_processes=stack.web_processes(),
            web_threads=options.web_threads or "default", per_endpoint=endpoints,
            floor_login_page_p50_ms=ms(floor_p50),
            one_annotator=single, many_annotators=concurrent,
            submitted=submitted, stored_submitted_annotations=stored, lost=submitted - stored,
            goals={"one_p95_next_ms": 30, "one_p95_submit_ms": 30, "many_p95_next_ms": 100,
                   "many_p95_submit_ms": 150, "many_requests_per_second": 135, "errors": 0, "lost": 0},
        )
        result["goals_met"] = {
            "one_p95_next": single["next_p95_ms"] <= 30,
            "one_p95_submit": single["submit_p95_ms"] <= 30,
            "many_p95_next": concurrent["next_p95_ms"] < 100,
            "many_p95_submit": concurrent["submit_p95_ms"] < 150,
            "many_requests_per_second": concurrent["requests_per_second"] >= 135,
            "no_errors": single["errors"] + concurrent["errors"] == 0,
            "nothing_lost": submitted == stored,
        }


if __name__ == "__main__":
    main()
