"""Memory of the default install (``./deidloop up``): what each process holds idle, and after a retrain.

Starts ``python -m config.launcher up`` on a fresh data folder and free ports (bench/workbench_latency.py's
stack), seeds it (MEDDOCAN train as a pool, the annotator accounts) and measures, from ``/proc``:

- **idle**: after the site answers, its first tasks (the demo's first model) are done and the worker has
  ended its pool processes, ``--settle`` seconds with no requests;
- **served**: after one annotator's ``--cycles`` next + submit cycles through every web process (the
  first requests import what the views need), ``--settle`` seconds later;
- **after a retrain**: once the submissions have made the worker fit and publish a model (the loop's
  batch), ``--settle`` seconds later — what the worker keeps of a trained model while it may be needed;
- **released**: once the worker has been idle ``--worker-idle-seconds`` (``DEIDLOOP_WORKER_IDLE_SECONDS``
  for this stack; 300 by default in a deployment) and has ended its pool processes, ``--settle`` seconds
  later.

What giving the memory back costs: the seconds from the submit that completes a batch (the project's batch
size, 5) to the new model's publication, once while the pool is warm (right after the retrain above) and
once after it was released (the pool processes start again, import the model libraries and featurize the
records anew), and their ratio.

Each time, per process kind (launcher, web, worker main process, worker pool processes, PostgreSQL with
its backends, Redis): the summed RSS (the figure the goal is set in; pages shared between processes count
once per process) and the summed PSS (shared pages divided among their processes, which
adds up to what the install really costs). The reference, measured in the same run, is the embedded
PostgreSQL and Redis alone (the floor any application on them starts from); the figures are also given
as a ratio to the goal of 600 MiB summed RSS.

Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from workbench_latency import PASSWORD, SHARED, Stack, Tally, _children, cycle, log_in, measured

GOAL_MIB = 600
#: The seeded project's batch size: submits per retrain.
BATCH = 5
KINDS = ("launcher", "web", "worker", "worker_pool", "postgres", "redis")


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


def _memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in KiB, from smaps_rollup."""
    rss = pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "Rss":
            rss = int(value.split()[0])
        elif name == "Pss":
            pss = int(value.split()[0])
    return rss, pss


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def _kind(pid: int, worker_main: set[int]) -> str | None:
    command = _cmdline(pid)
    if "config.launcher" in command:
        return "launcher"
    if "config.webserver" in command:
        return "web"
    if "celery" in command:
        return "worker" if pid in worker_main else "worker_pool"
    if "postgres" in command:
        return "postgres"
    if "redis" in command:
        return "redis"
    return None


def snapshot(stack: Stack) -> dict:
    """Summed RSS and PSS (MiB) and process counts per kind, for the launcher and everything under it."""
    # PostgreSQL and Redis run detached from the launcher (the embedded services outlive one command).
    postmaster = int((stack.data / "postgres" / "data" / "postmaster.pid").read_text().split()[0])
    redis = int((stack.data / "redis" / "redis.pid").read_text().split()[0])
    pids = [stack.process.pid, *_descendants(stack.process.pid), postmaster, *_descendants(postmaster), redis]
    celery = {pid for pid in pids if "celery" in _cmdline(pid)}
    worker_main = {pid for pid in celery if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                   not in celery}
    totals = {kind: {"processes": 0, "rss_mib": 0.0, "pss_mib": 0.0} for kind in KINDS}
    for pid in pids:
        try:
            kind = _kind(pid, worker_main)
            if kind is None:
                continue
            rss, pss = _memory_kib(pid)
        except OSError:  # exited meanwhile
            continue
        totals[kind]["processes"] += 1
        totals[kind]["rss_mib"] += rss / 1024
        totals[kind]["pss_mib"] += pss / 1024
    for figures in totals.values():
        figures["rss_mib"] = round(figures["rss_mib"], 1)
        figures["pss_mib"] = round(figures["pss_mib"], 1)
    rss = sum(figures["rss_mib"] for figures in totals.values())
    pss = sum(figures["pss_mib"] for figures in totals.values())
    services = sum(totals[kind]["rss_mib"] for kind in ("postgres", "redis"))
    return {"total_rss_mib": round(rss, 1), "total_pss_mib": round(pss, 1),
            "rss_over_goal": round(rss / GOAL_MIB, 2), "rss_over_services": round(rss / services, 2),
            "services_rss_mib": round(services, 1), "by_kind": totals}


def models_published(stack: Stack, project_id: int) -> int:
    return int(stack.manage(
        "shell", "-c",
        "from learning.models import ModelVersion; "
        f"print(ModelVersion.objects.filter(project_id={project_id}).count())",
    ).strip().splitlines()[-1])


def wait_for_no_retrain(stack: Stack, project_id: int, bound: float) -> None:
    """Until the project has no retrain job waiting or under way (the served cycles asked for several)."""
    code = ("from learning.models import RetrainJob; print(RetrainJob.objects.filter("
            f"project_id={project_id}, status__in=RetrainJob.ACTIVE).count())")
    deadline = time.monotonic() + bound
    while int(stack.manage("shell", "-c", code).strip().splitlines()[-1]):
        if time.monotonic() > deadline:
            raise RuntimeError(f"retrains were still under way after {bound} s")
        time.sleep(1)


def seconds_to_next_model(stack: Stack, session, project_id: int, rng: random.Random, tally: Tally,
                          bound: float) -> float:
    """Seconds from the submit that completes a batch of BATCH records to the next model's publication
    (polled through ``manage``, about a second apart)."""
    before = models_published(stack, project_id)
    for _ in range(BATCH):
        if not cycle(session, stack.base, project_id, rng, tally):
            raise RuntimeError(f"a next or submit failed: {tally.errors[-1:] or 'the pool is empty'}")
    started = time.monotonic()
    while models_published(stack, project_id) <= before:
        if time.monotonic() - started > bound:
            raise RuntimeError(f"no model was published within {bound} s of a full batch")
        time.sleep(0.5)
    return round(time.monotonic() - started, 1)


def wait_for_released_pool(stack: Stack, seconds: float) -> None:
    """Until the worker has ended its pool processes (idle for ``DEIDLOOP_WORKER_IDLE_SECONDS``)."""
    deadline = time.monotonic() + seconds
    while snapshot(stack)["by_kind"]["worker_pool"]["processes"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the worker did not end its pool processes within {seconds} s")
        time.sleep(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=20.0, help="seconds without requests before measuring")
    parser.add_argument("--cycles", type=int, default=30, help="next + submit cycles before the second measure")
    parser.add_argument("--retrain-seconds", type=float, default=300.0, help="how long to wait for a model")
    parser.add_argument("--worker-idle-seconds", type=float, default=60.0,
                        help="DEIDLOOP_WORKER_IDLE_SECONDS of the stack: idle time before the pool shrinks")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()

    stack = Stack(web_workers=None, web_threads=None)
    stack.env["DEIDLOOP_WORKER_IDLE_SECONDS"] = str(options.worker_idle_seconds)
    result: dict = {"benchmark": "memory", "goal_total_rss_mib": GOAL_MIB}
    with measured(stack, result):
        stack.start()
        seeded = json.loads(stack.manage(
            "seed_benchmark", str(SHARED / "meddocan" / "train"), "--annotators", "1", "--password", PASSWORD,
            "--seed", str(options.seed),
        ).strip().splitlines()[-1])
        project_id = seeded["project_id"]
        wait_for_released_pool(stack, options.worker_idle_seconds + options.retrain_seconds)
        time.sleep(options.settle)
        result["idle"] = snapshot(stack)

        session = log_in(stack.base, seeded["annotators"][0], PASSWORD)
        tally, rng = Tally(), random.Random(options.seed)
        for _ in range(options.cycles):
            if not cycle(session, stack.base, project_id, rng, tally):
                break
        result["cycles"] = {"submitted": tally.submitted, "errors": tally.errors[:5]}
        time.sleep(options.settle)
        result["served"] = snapshot(stack)

        deadline = time.monotonic() + options.retrain_seconds
        while models_published(stack, project_id) == 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no model was published within {options.retrain_seconds} s")
            time.sleep(2)
        time.sleep(options.settle)
        result["after_retrain"] = snapshot(stack)
        wait_for_no_retrain(stack, project_id, options.retrain_seconds)  # the warm one waits behind none
        warm = seconds_to_next_model(stack, session, project_id, rng, tally, options.retrain_seconds)

        wait_for_released_pool(stack, options.worker_idle_seconds + options.retrain_seconds)
        time.sleep(options.settle)
        result["released"] = snapshot(stack)
        after_idle = seconds_to_next_model(stack, session, project_id, rng, tally, options.retrain_seconds)
        result["batch_to_model_seconds"] = {"warm_pool": warm, "after_release": after_idle,
                                            "ratio": round(after_idle / warm, 2)}
        result["worker_idle_seconds"] = options.worker_idle_seconds
        result["goal_met"] = max(result[phase]["total_rss_mib"] for phase in ("idle", "released")) < GOAL_MIB


if __name__ == "__main__":
    main()
