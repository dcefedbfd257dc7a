"""Turnaround of the active-learning loop on real Celery workers: from the submission that completes a batch
until the next-record query serves the new model's ranking, with 1 and with 2 worker processes.

Set-up, on a scratch database of the embedded PostgreSQL (``deidloop_bench_loop``, dropped and recreated at
the start of every run and left in place afterwards for inspection): a MEDDOCAN project (CRF with the
tagger's default parameters unless ``--max-iterations`` or ``--no-gold-lexicon``, strategy LCUB_6, batch
size ``--batch``) whose gold is MEDDOCAN train imported annotated (pool role), whose evaluation set is
MEDDOCAN dev (``--no-evaluation`` leaves it out; evaluating is part of every retrain), and whose unlabelled
pool is ``--pool`` records: the dev and train texts again and again, each replica with its own first line
(``Registro 0003``), so that every record has its own content hash and is featurized on its own. A first
retrain runs in this process (``train_and_rank``), so a current model and ranking exist before anything is
measured; its time is reported as ``warmup_in_process_seconds``.

Measurement, per worker count N (``--workers``): a ``celery worker --concurrency N`` on a queue of its own
is started; an annotator takes ``--batch`` records with ``next_record`` and submits each through
``annotator.services.annotations.submit`` with its true spans (the spans of the MEDDOCAN text the record
was made from, moved past the added first line), so the real path runs: the submission's signal after
commit, ``request_retrain``, ``learning.retrain`` on the broker, the shard chord, ``learning.publish``.
The clock starts just before the batch-completing ``submit`` call and stops when this process sees a current
ranking made by a new model version: it listens to the project's notices, as an open browser does (the notice
that the ranking is ready comes right after the ranking is published), and reads the current ranking on each
notice but the progress of training and scoring (a page only moves its progress bar on those), and at least
every two seconds. It does not poll the database in a tight loop, nor at every shard scored: on a machine with as
many cores as worker processes, a poller takes a share of the cores from the processes it is timing. Before each
batch it waits until the worker runs no task, and two seconds more: annotators take minutes over a batch, by
when the work that follows a publish (completing the suggestions of the new ranking's first records ahead of
their hand-out) is over, and each idle process has collected its garbage, so a retrain does not share the
processors with the tail of the one before. From the job's timestamps come
the wait in the queue (started − created), training (trained − started: fitting, staging; ``fit_seconds``, the
fit alone, as the job's result gives it) and scoring
(finished − trained: every shard and the model's evaluation, one chord, then publishing); tokens
scored per second are the tokens of the scored records (counted once with ``corpus.text.tokenize``) over the
scoring seconds. Another annotator, one with no open record, then asks for a record, which must be the new
ranking's first. The worker is stopped (also on failure) before the next N.

The first retrain a fresh worker runs is on a *cold* worker: its processes hold no features yet (each process
keeps its own ``FeatureCache``) and import crfsuite on first use; they read the records' features and the
project's vocabulary that earlier processes stored in the database (``learning.services.feature_store``; the
in-process warm-up stores them for every record), as a worker does after a restart, on another host, or when
its pool grows back after its idle time. The later ones (``--repeats`` - 1 consecutive batches) are on *warm*
workers. Both are reported (warm: the median of the warm runs), with the median and the max over all runs of a
worker count, and how each retrain fitted its CRF (``fits``: "warm", continuing from the current model, or
"cold", crfsuite from zero; the in-process warm-up is cold) and how many passes over the gold a warm fit made
(``fit_evaluations``: the objective's value, one per trial step; ``fit_gradients``: how many of them went on to
the gradient, one per step kept but the last), and from how many curvature steps of the fit before it a warm fit
started (``fit_carried_steps``: none when the process that fitted the current model is not the one that
continues it) and whether its first pass was prepared while the worker was idle (``fit_prepared``; the passes
counted are then one fewer).

Reference, measured in the same run: the 2-worker times as ratios of the 1-worker times (``speedup_total``,
``speedup_scoring``), cold and warm. Training runs in one process whatever N is, so the whole-loop
speed-up is bounded by the training share (Amdahl): with training t and scoring s seconds on one process, 2
processes can at best take t + s/2; ``ideal_speedup_total`` is that bound from the 1-worker figures.
Two processes do not get twice the work done on every machine, though:
``two_processes`` (``bench/two_processes.py``) measures, after the workers, the summed throughput of 2
processes scoring records as shards are scored (``--shard-documents`` at a time, features assembled from their
compact form) with the loop's current model, outside the loop (no database, broker or worker), as a ratio of
1 process; ``speedup_total_at_this_ratio`` is the whole-loop bound with scoring that scales by that ratio, and
``speedup_scoring_over_this_ratio`` how much of it the loop's 2-worker scoring keeps. And
``cold_2_workers_nothing_stored``: one more retrain on a fresh 2-process worker after the project's stored
features and vocabulary are deleted (the first retrain of records no process has featurized), with the
2-worker cold run (features and vocabulary stored) as a ratio of it, and both cold scorings as ratios of the
warm one.

Where the processors go, per retrain over the same clock (Linux's ``/proc``): ``cpu_seconds`` (the warm runs'
median) of the whole machine, of the worker's processes, of PostgreSQL's and of this process, and
``cores_busy``, the machine's processor seconds over the seconds to the new ranking. A retrain costs about the
same processor time with 1 and with 2 worker processes, so the whole-loop speed-up is about
``cores_busy_ratio`` (2 workers over 1): with 1 worker the other processors are not idle either (the fit's
threads, PostgreSQL, this process), and with 2 the machine is busy all but what the serial steps leave idle.

``--large-pool N`` then grows the pool to N records and times two more retrains with 2 workers (how the
refresh grows with the pool). Unless ``--no-quality``, the warm start's quality is checked in the same run
(``warm_start_quality``, from ``bench/warm_start.py``: 20 warm batches after a cold fit on 400 MEDDOCAN
train documents, each first pass prepared as a worker prepares it while idle, against a cold fit on the same
final documents, entity F1 on dev).

``--hosts`` measures instead what spreading the workers over two hosts costs, in the same run: (a) 2 worker
processes on one host (this machine, the local artifact store: files in the data folder they share) against (b)
the same 2 processes on two hosts, one each with an empty data folder of its own, every process (this one
included) keeping models in the PostgreSQL artifact store (``DEIDLOOP_ARTIFACT_STORE=postgres``). The hosts are
network namespaces (``bench/loop_hosts.py``, needs root); PostgreSQL and Redis run for the run on a host of their
own, listening on its address, and both settings use them over the bridge (the scratch database is made there),
so the servers are the same for both. Before (b) the saved models are copied into the PostgreSQL store, so (b)
continues from the model (a) ended with. Per setting: the median and max seconds to the new ranking (cold and
warm as above), and the bytes moved per retrain: every worker process appends each artifact it reads (the
current model read to continue from and to compare with, the new model read by each process that scores a
shard) and the reads in a retrain's window are summed; ``model_bytes`` is the sealed model's size and
``model_readers`` the processes that read it, so bytes moved ≈ model_bytes × (model_readers + 1 or 2). The
reference is (a): ``two_hosts_over_one`` gives (b)/(a) for the median, the max, the bytes, the reads and the
model's size. (b) runs after (a), so its models are later ones, and warm fits grow a model (every attribute
seen stays a row of its weights): the bytes' ratio is the reads' ratio times the models' sizes' ratio. ``--workers``,
``--large-pool`` and the quality check do not apply. Without network namespaces it prints why and a JSON line
with ``skipped``, and exits 0.

Prints one JSON line. Goal: with 2 workers the median refresh is at most 15 s and the longest at most 30 s
(``meets_goal``); the process exits with status 1 if a next-record check failed. BLAS thread pools are
limited to 1 thread per process (unless set in the environment), so N processes are N cores' worth of work.

Options: ``--pool`` (5000), ``--gold`` (500), ``--batch`` (5), ``--shard-documents`` (250),
``--workers`` ("1,2"), ``--repeats`` (6), ``--max-iterations`` (CRF; default the tagger's),
``--no-evaluation``, ``--timeout`` (seconds per retrain, 900), ``--quick`` (60 gold, 25 evaluation and
600 pool records: the whole script in a couple of minutes), ``--hosts`` (one host against two, above;
``--quick --hosts --repeats 3`` takes about a minute).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

from django_env import SHARED, setup_scratch_database  # noqa: E402

MEDDOCAN = SHARED / "meddocan"
DATABASE = "deidloop_bench_loop"
GOAL = {"median_2_workers": 15.0, "max_2_workers": 30.0}
CHECK_SECONDS = 1.0  # the longest wait for a notice before reading the current ranking again
PROGRESS_STAGES = {"queued", "training", "scoring", "evaluated"}  # notices after which nothing is read
SETTLE_SECONDS = 60.0  # the longest wait for the worker to finish its tasks before a batch
QUIET_SECONDS = 2.0  # then a process idle for a second has collected its garbage (IdleCollection's idle_seconds)


@dataclass(frozen=True)
class PoolRecord:
    """Where a pool record's text came from: its spans are the source's, moved by the added first line."""
    source: object  # corpus.types.Document
    shift: int


def replicate(sources: list, n: int) -> tuple[list, dict[str, PoolRecord]]:
    """``n`` pool documents: the sources again and again, each replica under a first line of its own."""
    from corpus.types import Document as CorpusDocument

    documents, origin = [], {}
    for i in range(n):
        replica, source = divmod(i, len(sources))
        header = f"Registro {replica:04d}\n"
        name = f"{sources[source].name}~{replica:04d}"
        documents.append(CorpusDocument(text=header + sources[source].text, name=name))
        origin[name] = PoolRecord(sources[source], len(header))
    return documents, origin


def true_spans(record: PoolRecord) -> list[dict]:
    from corpus.span_json import write_span

    return [write_span(s, origin="human", shift=record.shift) for s in record.source.spans]


def seconds(later, earlier) -> float | None:
    return None if later is None or earlier is None else (later - earlier).total_seconds()


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else round(a / b, 3)


TASK_LINE = re.compile(r"Task [\w.]+\[([0-9a-f-]+)\] (received|succeeded|raised|failed|ignored|rejected|retry)")


def cpu_seconds(worker_pid: int | None) -> dict[str, float]:
    """The processor seconds used so far (Linux's ``/proc``; {} elsewhere): by the whole machine (every
    processor, busy), by the worker (its main process ``worker_pid`` and its pool processes; none when None: the
    workers of ``--hosts``' two hosts), by PostgreSQL (the processes named so) and by this process. A process that
    ends between two readings is left out of its group's difference."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        with open("/proc/stat") as f:
            user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in f.readline().split()[1:8])
    except OSError:
        return {}
    used = {"machine": (user + nice + system + irq + softirq) / tick, "workers": 0.0, "postgres": 0.0, "bench": 0.0}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        pid, seconds_used = int(entry), (int(fields[11]) + int(fields[12])) / tick
        if worker_pid is not None and worker_pid in (pid, int(fields[1])):
            used["workers"] += seconds_used
        elif name == "postgres":
            used["postgres"] += seconds_used
        elif pid == os.getpid():
            used["bench"] += seconds_used
    return used


def settle(worker) -> None:
    """Wait until the worker runs no task (at most :data:`SETTLE_SECONDS`), as its log tells (it logs each task
    it receives and each one it ends), then :data:`QUIET_SECONDS` more: the batch that an annotator takes
    minutes over starts after the worker's work on the batch before is over, and after what its idle processes
    do then (``config.memory.IdleCollection``)."""
    deadline = time.perf_counter() + SETTLE_SECONDS
    while time.perf_counter() < deadline:
        running: set[str] = set()
        for task, event in TASK_LINE.findall(worker.log()):  # in order: a task retried is received again
            if event == "received":
                running.add(task)
            else:
                running.discard(task)
        if not running:
            time.sleep(QUIET_SECONDS)
            return
        time.sleep(0.1)
    print(f"the worker still ran tasks after {SETTLE_SECONDS:.0f} s; measuring anyway", file=sys.stderr)


class Loop:
    """The project, its people and the pool, and one measured retrain at a time."""

    def __init__(self, *, project, annotator, origin: dict[str, PoolRecord], tokens: dict[int, int],
                 timeout: float) -> None:
        self.project, self.annotator = project, annotator
        self.origin, self.tokens, self.timeout = origin, tokens, timeout
        self.checkers = 0

    def _new_checker(self):
        """An annotator with no open record (an open one would be handed out again, whatever the ranking)."""
        from django.contrib.auth import get_user_model

        from annotator.models import Membership
        from annotator.services.projects import set_membership

        self.checkers += 1
        user = get_user_model().objects.create_user(f"bench-checker-{self.checkers}")
        set_membership(project=self.project, user=user, role=Membership.Role.ANNOTATOR)
        return user

    def _current(self) -> tuple[int, int | None] | None:
        from annotator.models import Ranking

        return Ranking.objects.filter(project=self.project, is_current=True).values_list(
            "pk", "model_version_id").first()

    async def _published(self, layer, channel, worker, *, old_version, last_job, started: float):
        """(ranking id, model version id) of the new current ranking and the seconds from ``started`` to seeing
        it: read on each notice to the project but those of progress (:func:`_progress`), on the first notice
        after :data:`CHECK_SECONDS` since the last read, and after that long without a notice."""
        from asgiref.sync import sync_to_async

        deadline = started + self.timeout
        while True:
            now = await sync_to_async(self._current)()
            if now is not None and now[1] is not None and now[1] != old_version:
                return now, time.perf_counter() - started
            failed = await sync_to_async(self._failed)(last_job)
            if failed is not None:
                raise RuntimeError(f"the retrain failed: {failed}\nworker log:\n{worker.log()}")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"no new ranking within {self.timeout} s; worker log:\n{worker.log()}")
            read = time.perf_counter()
            while True:
                try:  # each receive waits as long: one cancelled at once can leave channels_redis's lock held
                    notice = await asyncio.wait_for(layer.receive(channel), CHECK_SECONDS)
                except asyncio.TimeoutError:
                    break
                if not _progress(notice) or time.perf_counter() - read >= CHECK_SECONDS:
                    break

    def _failed(self, last_job: int | None) -> str | None:
        from learning.models import RetrainJob

        return RetrainJob.objects.filter(project=self.project, pk__gt=last_job or 0,
                                         status=RetrainJob.Status.FAILED).values_list("error", flat=True).first()

    def measure(self, worker) -> dict:
        """Submit one batch; time it until the new ranking is current; check what is handed out next."""
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer

        from annotator.models import PoolScore
        from annotator.services.annotations import submit
        from annotator.services.notify import project_group
        from annotator.services.queue import next_record
        from learning.models import RetrainJob

        settle(worker)
        worker_pid = getattr(getattr(worker, "process", None), "pid", None)
        before = self._current()
        old_version = before[1] if before else None
        last_job = RetrainJob.objects.filter(project=self.project).order_by("-pk").values_list("pk", flat=True).first()
        layer = get_channel_layer()
        channel = async_to_sync(layer.new_channel)()
        async_to_sync(layer.group_add)(project_group(self.project.pk), channel)
        try:
            # One record at a time, as an annotator works: next_record hands out the open record until it is
            # submitted.
            for i in range(self.project.batch_size):
                handout = next_record(project=self.project, user=self.annotator)
                if handout is None:
                    raise RuntimeError("the pool ran out of records")
                record = self.origin[handout.annotation.document.external_id]
                cpu_before = cpu_seconds(worker_pid)
                started = time.perf_counter()
                result = submit(annotation_id=handout.annotation.pk, user=self.annotator,
                                version=handout.annotation.version, spans=true_spans(record), active_seconds=30.0)
                if result.repeated:
                    raise RuntimeError(f"record {handout.annotation.document.pk} was handed out twice")
            # The signal runs in the submitting thread once the submission committed: the job exists by now.
            if not RetrainJob.objects.filter(project=self.project, pk__gt=last_job or 0).exists():
                raise RuntimeError("the batch-completing submission queued no retrain")
            now, elapsed = async_to_sync(self._published)(layer, channel, worker, old_version=old_version,
                                                          last_job=last_job, started=started)
            cpu_after = cpu_seconds(worker_pid)
        finally:
            async_to_sync(layer.group_discard)(project_group(self.project.pk), channel)

        ranking_id, version_id = now
        job = RetrainJob.objects.get(model_version_id=version_id)
        scored = list(PoolScore.objects.filter(ranking_id=ranking_id).order_by("rank").values_list(
            "document_id", flat=True))
        scoring = seconds(job.finished_at, job.trained_at)
        scored_tokens = sum(self.tokens[document_id] for document_id in scored)
        handout = next_record(project=self.project, user=self._new_checker())
        cpu = {key: cpu_after[key] - cpu_before[key] for key in cpu_before}
        return {
            "seconds_to_new_ranking": elapsed,
            "cpu_seconds": cpu,
            "cores_busy": cpu["machine"] / elapsed if cpu else None,
            "queue_seconds": seconds(job.started_at, job.created_at),
            "fit_seconds": (job.result or {}).get("train_seconds"),
            "train_seconds": seconds(job.trained_at, job.started_at),
            "scoring_seconds": scoring,
            "tokens_scored_per_second": scored_tokens / scoring if scoring else None,
            "scored_documents": len(scored),
            "pool_size": job.pool_size,
            "shards": job.shards,
            "attempt": job.attempt,
            "reason": job.reason,
            "fit": (job.result or {}).get("fit", {}).get("kind"),
            "evaluations": (job.result or {}).get("fit", {}).get("evaluations"),
            "gradients": (job.result or {}).get("fit", {}).get("gradients"),
            "carried_steps": (job.result or {}).get("fit", {}).get("carried_steps"),
            "prepared": (job.result or {}).get("fit", {}).get("prepared"),
            "artifact": job.artifact,
            "trained_on": (job.result or {}).get("trained_on"),
            "scored_on": (job.result or {}).get("scored_on"),
            "next_record_is_top": handout is not None and bool(scored) and handout.annotation.document.pk == scored[0],
        }


def _progress(notice: dict) -> bool:
    """Whether ``notice`` only tells how far a retrain has come (after which the ranking is not read again)."""
    return notice.get("kind") == "retrain_progress" and (notice.get("data") or {}).get("stage") in PROGRESS_STAGES


def summarise(runs: list[dict]) -> dict:
    """One worker count's runs: the first is cold, the rest warm (their median)."""
    def stage(key: str, digits: int = 3) -> dict:
        warm = [run[key] for run in runs[1:] if run[key] is not None]
        return {"cold": rounded(runs[0][key], digits),
                "warm": rounded(statistics.median(warm), digits) if warm else None}

    totals = [run["seconds_to_new_ranking"] for run in runs]
    return {
        "seconds_to_new_ranking": stage("seconds_to_new_ranking"),
        "median_seconds_to_new_ranking": rounded(statistics.median(totals)),
        "max_seconds_to_new_ranking": rounded(max(totals)),
        "fits": [run["fit"] for run in runs],
        "fit_evaluations": [run["evaluations"] for run in runs],
        "fit_gradients": [run["gradients"] for run in runs],
        "fit_carried_steps": [run["carried_steps"] for run in runs],
        "fit_prepared": [run["prepared"] for run in runs],
        "queue_seconds": stage("queue_seconds"),
        "train_seconds": stage("train_seconds"),
        "fit_seconds": stage("fit_seconds"),
        "scoring_seconds": stage("scoring_seconds"),
        "tokens_scored_per_second": stage("tokens_scored_per_second", 0),
        "cores_busy": stage("cores_busy", 2),
        "cpu_seconds": {key: rounded(statistics.median(run["cpu_seconds"][key] for run in runs[1:] or runs), 2)
                        for key in runs[0]["cpu_seconds"]},
        "seconds_to_new_ranking_runs": [rounded(run["seconds_to_new_ranking"]) for run in runs],
        "shards": runs[-1]["shards"],
        "pool_size": runs[-1]["pool_size"],
        "scored_documents": runs[-1]["scored_documents"],
        "attempts": [run["attempt"] for run in runs],
        "next_record_is_top": all(run["next_record_is_top"] for run in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=None, help="unlabelled pool records (default 5000)")
    parser.add_argument("--gold", type=int, default=None, help="MEDDOCAN train documents as gold (default 500)")
    parser.add_argument("--batch", type=int, default=5, help="the project's batch size")
    parser.add_argument("--shard-documents", type=int, default=None,
                        help="pool documents per scoring task (default $DEIDLOOP_SHARD_DOCUMENTS or 250)")
    parser.add_argument("--workers", default="1,2", help="worker process counts to measure, e.g. 1,2")
    parser.add_argument("--repeats", type=int, default=6,
                        help="consecutive retrains per worker count (the first on a cold worker, the rest warm)")
    parser.add_argument("--max-iterations", type=int, default=None,
                        help="CRF L-BFGS iterations (default: the tagger's)")
    parser.add_argument("--no-evaluation", dest="evaluation", action="store_false",
                        help="no evaluation set (a retrain then skips evaluating)")
    parser.add_argument("--no-gold-lexicon", dest="gold_lexicon", action="store_false",
                        help="the CRF without the gold lexicon's features (its default has them)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for one new ranking")
    parser.add_argument("--quick", action="store_true", help="60 gold, 25 evaluation, 600 pool records")
    parser.add_argument("--no-quality", dest="quality", action="store_false",
                        help="leave out the warm-start quality check (bench/warm_start.py's F1 gap)")
    parser.add_argument("--large-pool", type=int, default=None,
                        help="then grow the pool to this many records and time one more retrain with 2 workers")
    parser.add_argument("--hosts", action="store_true",
                        help="instead: 2 worker processes on one host against one on each of two hosts (network "
                             "namespaces, PostgreSQL artifact store)")
    args = parser.parse_args()
    # A SIGTERM (a killed job) unwinds like an exception, so the worker is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    worker_counts = [int(n) for n in args.workers.split(",") if n.strip()]
    if not worker_counts or min(worker_counts) < 1 or args.repeats < 1 or args.batch < 1:
        parser.error("--workers needs counts >= 1, --repeats and --batch >= 1")
    if args.hosts and args.large_pool:
        parser.error("--large-pool does not apply with --hosts")
    pool_size = args.pool or (600 if args.quick else 5000)
    gold_size = args.gold or (60 if args.quick else 500)

    if args.shard_documents:
        os.environ["DEIDLOOP_SHARD_DOCUMENTS"] = str(args.shard_documents)
    shard_documents = int(os.environ.get("DEIDLOOP_SHARD_DOCUMENTS", "250"))
    # This process and the workers share a queue of their own and a data folder for the saved models.
    scratch = Path(tempfile.mkdtemp(prefix="deidloop-bench-loop-"))
    os.environ["DEIDLOOP_QUEUE"] = f"bench-loop-{uuid.uuid4().hex[:8]}"
    os.environ["DEIDLOOP_DATA_DIR"] = str(scratch / "data")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    wall = time.perf_counter()
    hosts = None
    if args.hosts:
        hosts = start_hosts(scratch)
    try:
        run(args, scratch=scratch, hosts=hosts, worker_counts=worker_counts, pool_size=pool_size,
            gold_size=gold_size, shard_documents=shard_documents, wall=wall)
    finally:
        if hosts is not None:
            hosts.close()


def start_hosts(scratch: Path):
    """The hosts' servers, started, with this process pointed at them; exits (status 0) saying why when
    network namespaces cannot be made here."""
    from loop_hosts import Hosts
    from tests.integration import netns

    why = netns.unavailable()
    if why is not None:
        print(f"--hosts skipped: no hosts on this machine ({why})", file=sys.stderr)
        print(json.dumps({"benchmark": "loop", "hosts": None, "skipped": why}))
        shutil.rmtree(scratch, ignore_errors=True)
        sys.exit(0)
    hosts = Hosts(scratch)
    try:
        os.environ["DATABASE_URL"], os.environ["REDIS_URL"] = hosts.start()
    except BaseException:
        hosts.close()
        raise
    os.environ["DEIDLOOP_ARTIFACT_STORE"] = "local"  # (a) first; (b) switches every process to PostgreSQL
    return hosts


def run(args, *, scratch: Path, hosts, worker_counts: list[int], pool_size: int, gold_size: int,
        shard_documents: int, wall: float) -> None:
    setup_scratch_database(DATABASE)

    from django.contrib.auth import get_user_model

    from corpus.formats import read_corpus
    from annotator.models import Document, Membership
    from annotator.services.imports import import_documents
    from annotator.services.projects import create_project, set_membership
    from corpus.text import tokenize
    from learning.models import StoredFeatures, StoredVocabulary
    from learning.services.feature_store import share_features
    from learning.services.retrain import train_and_rank
    from tests.integration.celery_worker import Worker

    train = read_corpus(MEDDOCAN / "train", "brat")
    dev = read_corpus(MEDDOCAN / "dev", "brat")
    gold = train[:gold_size]
    evaluation = (dev[:25] if args.quick else dev) if args.evaluation else []
    pool, origin = replicate(dev + train, pool_size)

    User = get_user_model()
    lead = User.objects.create_user("bench-lead")
    annotator = User.objects.create_user("bench-annotator")
    project = create_project(name="bench-loop", schema="MEDDOCAN", created_by=lead)
    set_membership(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    project.batch_size = args.batch
    project.strategy = "LCUB_6"
    params = {"max_iterations": args.max_iterations} if args.max_iterations else {}
    if not args.gold_lexicon:
        params["gold_lexicon"] = False
    if params:
        project.tagger = {"kind": "crf", "params": params}
    project.save()
    imported = import_documents(project=project, documents=gold, annotated=True)
    if evaluation:
        import_documents(project=project, documents=evaluation, annotated=True, evaluation=True)
    created = import_documents(project=project, documents=pool, annotated=False).created
    if imported.created != len(gold) or created != pool_size:
        raise RuntimeError(f"imported {imported.created} gold and {created} pool records, "
                           f"expected {len(gold)} and {pool_size} (duplicate texts?)")
    tokens = {document_id: len(tokenize(text)) for document_id, text in Document.objects.filter(
        project=project, role=Document.Role.POOL, status=Document.Status.POOL).values_list("id", "text")}

    share_features()  # as in a worker: what the warm-up featurizes is stored for the workers' processes
    started = time.perf_counter()
    if train_and_rank(project=project) is None:
        raise RuntimeError("the warm-up retrain did not publish a model")
    warmup_seconds = time.perf_counter() - started

    loop = Loop(project=project, annotator=annotator, origin=origin, tokens=tokens, timeout=args.timeout)
    setting = {
        "benchmark": "loop",
        "pool": pool_size,
        "pool_tokens": sum(tokens.values()),
        "gold": len(gold),
        "evaluation": len(evaluation),
        "batch": args.batch,
        "shard_documents": shard_documents,
        "tagger": project.tagger,
        "strategy": project.strategy,
        "repeats": args.repeats,
        "blas_threads": os.environ.get("OMP_NUM_THREADS"),
        "submitted_spans": "true spans of the source MEDDOCAN text",
        "warmup_in_process_seconds": round(warmup_seconds, 3),
    }
    if hosts is not None:
        report = measure_hosts(loop, hosts, scratch=scratch, repeats=args.repeats)
        print(json.dumps({**setting, **report, "wall_seconds": round(time.perf_counter() - wall, 1)}))
        shutil.rmtree(scratch, ignore_errors=True)
        if not report["next_record_is_top"]:
            sys.exit(1)
        return
    results: dict[str, dict] = {}
    for processes in worker_counts:
        worker = Worker(queue=os.environ["DEIDLOOP_QUEUE"], data_dir=scratch / "data",
                        log_path=scratch / f"worker-{processes}.log", processes=processes)
        try:
            worker.start()
            runs = [loop.measure(worker) for _ in range(args.repeats)]
        except BaseException:
            print(f"worker logs and models are kept in {scratch}", file=sys.stderr)
            raise
        finally:
            worker.stop()
            results[str(processes)] = summarise(runs)

    nothing_stored = None
    if "2" in results:
        # Reference: a cold 2-process worker that finds no record's features stored (the first retrain ever).
        StoredFeatures.objects.filter(document__project=project).delete()
        StoredVocabulary.objects.filter(project=project).delete()
        worker = Worker(queue=os.environ["DEIDLOOP_QUEUE"], data_dir=scratch / "data",
                        log_path=scratch / "worker-nothing-stored.log", processes=2)
        try:
            worker.start()
            reference = loop.measure(worker)
        finally:
            worker.stop()
        cold = results["2"]
        nothing_stored = {key: rounded(reference[key]) for key in
                          ("seconds_to_new_ranking", "train_seconds", "scoring_seconds")}
        nothing_stored["cold_with_features_stored_ratio"] = {
            key: ratio(cold[key]["cold"], reference[key])
            for key in ("seconds_to_new_ranking", "train_seconds", "scoring_seconds")}
        nothing_stored["cold_to_warm_scoring_ratio"] = {
            "features_stored": ratio(cold["scoring_seconds"]["cold"], cold["scoring_seconds"]["warm"]),
            "nothing_stored": ratio(reference["scoring_seconds"], cold["scoring_seconds"]["warm"])}

    # Reference: what two processes get out of this machine for the scoring's own work with the loop's model,
    # no database, broker or worker involved (bench/two_processes.py).
    from two_processes import two_process_ratio

    from learning.models import ModelVersion
    from learning.services.model_store import load_model

    current = ModelVersion.objects.get(project=project, is_current=True)
    machine = two_process_ratio(load_model(current.artifact, project_id=project.pk), records=shard_documents)

    large = None
    if args.large_pool and args.large_pool > pool_size:
        more, more_origin = replicate(dev + train, args.large_pool)
        more = more[pool_size:]
        loop.origin.update(more_origin)
        import_documents(project=project, documents=more, annotated=False)
        tokens.update({document_id: len(tokenize(text)) for document_id, text in Document.objects.filter(
            project=project, role=Document.Role.POOL, status=Document.Status.POOL).exclude(
            id__in=list(tokens)).values_list("id", "text")})
        worker = Worker(queue=os.environ["DEIDLOOP_QUEUE"], data_dir=scratch / "data",
                        log_path=scratch / "worker-large.log", processes=2)
        try:
            worker.start()
            large_runs = [loop.measure(worker) for _ in range(2)]
        finally:
            worker.stop()
        large = {"pool": args.large_pool, **summarise(large_runs)}

    quality = None
    if args.quality:
        from warm_start import warm_sequence

        sequence = warm_sequence(train, dev, start=400 if not args.quick else 60, batch=args.batch,
                                 batches=20 if not args.quick else 4)
        quality = {key: sequence[key] for key in ("final_documents", "warm_fits", "prepared_fits", "entity_f1",
                                                  "f1_gap", "meets_f1_goal", "warm_fit_seconds", "cold_fit_seconds")}

    one, two = results.get("1"), results.get("2")

    def speedup(key: str, state: str) -> float | None:
        return ratio(one[key][state], two[key][state]) if one and two else None

    ideal = at_machine_ratio = None
    if one:
        state = "warm" if one["scoring_seconds"]["warm"] is not None else "cold"
        total = one["seconds_to_new_ranking"][state]
        ideal = ratio(total, total - one["scoring_seconds"][state] / 2)
        at_machine_ratio = ratio(total, total - one["scoring_seconds"][state] * (1 - 1 / machine["ratio"]))
    all_runs = [value for result in results.values() for value in result["seconds_to_new_ranking_runs"]]
    next_is_top = all(result["next_record_is_top"] for result in results.values())
    print(json.dumps({
        **setting,
        "workers": results,
        "speedup_total": {"cold": speedup("seconds_to_new_ranking", "cold"),
                          "warm": speedup("seconds_to_new_ranking", "warm")},
        "speedup_scoring": {"cold": speedup("scoring_seconds", "cold"), "warm": speedup("scoring_seconds", "warm")},
        "cores_busy_ratio": {state: ratio(two["cores_busy"][state], one["cores_busy"][state]) if one and two else None
                             for state in ("cold", "warm")},
        "ideal_speedup_total": ideal,
        "two_processes": {
            **machine,
            "speedup_total_at_this_ratio": at_machine_ratio,
            "speedup_scoring_over_this_ratio": ratio(speedup("scoring_seconds", "warm"), machine["ratio"])
            if one and two else None,
        },
        "goal_seconds": GOAL,
        "worst_seconds_to_new_ranking": max(all_runs),
        "meets_goal": bool(two) and two["median_seconds_to_new_ranking"] <= GOAL["median_2_workers"]
        and two["max_seconds_to_new_ranking"] <= GOAL["max_2_workers"],
        "cold_2_workers_nothing_stored": nothing_stored,
        "large_pool": large,
        "warm_start_quality": quality,
        "next_record_is_top": next_is_top,
        "wall_seconds": round(time.perf_counter() - wall, 1),
    }))
    shutil.rmtree(scratch, ignore_errors=True)
    if not next_is_top:
        sys.exit(1)


def measure_hosts(loop: Loop, hosts, *, scratch: Path, repeats: int) -> dict:
    """(a) 2 worker processes here with the local artifact store, then (b) one on each of two hosts with the
    PostgreSQL one; ``repeats`` retrains each, with the artifact bytes every retrain's processes read."""
    from django.conf import settings

    from annotator.artifact_store import LocalStore, PostgresStore
    from loop_hosts import READS, ReadLog, worker_command
    from tests.integration.celery_worker import Worker

    queue = os.environ["DEIDLOOP_QUEUE"]
    reads = ReadLog(scratch / "artifact-reads.jsonl")

    def measured(worker) -> list[dict]:
        runs = []
        for _ in range(repeats):
            mark = reads.mark()
            run = loop.measure(worker)
            runs.append({**run, **reads.since(mark, run["artifact"])})
        return runs

    one = Worker(queue=queue, data_dir=scratch / "data", log_path=scratch / "worker-one-host.log", processes=2,
                 command=worker_command(queue, 2), environment={READS: str(reads.path)})
    try:
        one.start(timeout=120)
        one_host = measured(one)
    except BaseException:
        print(f"worker logs are kept in {scratch}", file=sys.stderr)
        raise
    finally:
        one.stop()

    # From here every process keeps models in PostgreSQL, starting from the ones (a) left in the data folder.
    local, database = LocalStore(settings.DATA_DIR), PostgresStore()
    for name in local.names("models/"):
        database.write(name, local.read(name))
    os.environ["DEIDLOOP_ARTIFACT_STORE"] = settings.ARTIFACT_STORE = "postgres"
    environment = {key: value for key, value in os.environ.items() if key not in ("DEIDLOOP_DATA_DIR", "DEIDLOOP_VAR")}
    environment.update({"SECRET_KEY": settings.SECRET_KEY, READS: str(reads.path)})
    try:
        two = hosts.start_workers(["deid-host-a", "deid-host-b"], queue=queue, environment=environment)
        two_hosts = measured(two)
    except BaseException:
        print(f"worker and server logs are kept in {scratch}", file=sys.stderr)
        raise

    a = {"hosts": 1, "processes": 2, "artifact_store": "local", **bytes_summary(one_host), **summarise(one_host)}
    b = {"hosts": 2, "processes": 2, "artifact_store": "postgres", **bytes_summary(two_hosts), **summarise(two_hosts)}
    return {
        "hosts": {"one_host": a, "two_hosts": b},
        "reference": "one_host (a), same run; two_hosts_over_one is (b)/(a)",
        "two_hosts_over_one": {key: ratio(b[key], a[key]) for key in (
            "median_seconds_to_new_ranking", "max_seconds_to_new_ranking", "bytes_moved_per_retrain",
            "artifact_reads_per_retrain", "model_bytes")},
        "next_record_is_top": a["next_record_is_top"] and b["next_record_is_top"],
    }


def bytes_summary(runs: list[dict]) -> dict:
    """The artifact bytes the worker processes read per retrain, and who did the work."""
    return {
        "bytes_moved_per_retrain": statistics.median([run["bytes_moved"] for run in runs]),
        "bytes_moved_runs": [run["bytes_moved"] for run in runs],
        "artifact_reads_per_retrain": statistics.median([run["artifact_reads"] for run in runs]),
        "artifact_reads_runs": [run["artifact_reads"] for run in runs],
        "model_bytes": statistics.median([run["model_bytes"] or 0 for run in runs]),
        "model_bytes_runs": [run["model_bytes"] for run in runs],
        "model_readers_runs": [run["model_readers"] for run in runs],
        "trained_on": [run["trained_on"] for run in runs],
        "scored_on": [run["scored_on"] for run in runs],
    }


if __name__ == "__main__":
    main()
