"""Every Celery task of learning: retrain a project, evaluate the model and score its pool in shards (a chord),
publish, recover; fit a base model from zero beside the loop; run a simulation; compute stylometric clusters;
train a de-identification model.

Every task is idempotent: ``retrain`` claims the job in the database before working on it, and shard and
publish tasks carry the attempt they belong to, so a message delivered twice, or one left over from an
attempt that was taken over, does nothing. With ``acks_late`` a message is only acknowledged once its task
ended; a worker killed mid-task leaves the job's lease to run out (or its process to be seen dead), and
``recover_jobs`` — run when a worker starts and every minute by beat — resumes it.

A transient database error (PostgreSQL restarted, the connection dropped: ``OperationalError`` or
``InterfaceError``) is not the job's fault, so it does not fail the job: the task drops the broken connection,
gives up the attempt's lease and retries itself a few times after a short wait (``DB_RETRIES`` ×
``DB_RETRY_SECONDS``); the retry claims the job as the next attempt, which goes on from what the dead one saved.
Only when the retries are spent is the job recorded as failed, on a new connection; if even that cannot reach
the database, the lease runs out and ``recover_jobs`` resumes the job. A claim made while the database is
down retries the same way, so the message is not lost; a scoring shard retries itself, and fails the job
(through the chord's error callback) only when its retries are spent.
"""
from __future__ import annotations

import logging

from celery import chord, shared_task
from celery.signals import (
    task_prerun, task_received, worker_init, worker_process_init, worker_ready, worker_shutdown,
)
from django.db import close_old_connections, connections

from annotator.selectors import submission_count
from learning.services import cold_refit, feature_store, jobs, retrain as services, workers
from learning.models import Clustering, DeidModel, ModelVersion, RetrainJob
from learning.selectors.loop import retrain_active, scored_so_far

log = logging.getLogger(__name__)


#: A task hit by a transient database error retries itself this many times, this many seconds apart.
DB_RETRIES = 5
DB_RETRY_SECONDS = 5


@shared_task(name="learning.retrain", bind=True, max_retries=DB_RETRIES)
def retrain(self, job_id: int, release: int | None = None) -> str:
    """Claim the job and train (or, when a dead attempt already trained, go on with scoring).

    On a transient database error the task retries (the next attempt resumes the job) rather than failing
    the job; see the module's docstring. A retry whose earlier run could not give up its attempt's lease (the
    database was still down) is sent with ``release``, that attempt: it gives the lease up first, so that it
    takes the job at once instead of finding it held until the lease runs out.
    """
    try:
        if release is not None:
            jobs.release(job_id, release)
        job = jobs.claim(job_id)
    except jobs.TRANSIENT_DB_ERRORS as error:
        jobs.drop_broken_connection()
        log.warning("could not claim retrain job %s (retrying): %s", job_id, error)
        raise self.retry(exc=error, countdown=DB_RETRY_SECONDS, kwargs={"release": release})
    if job is None:
        return "not claimed"
    try:
        with jobs.lease(job):
            if job.status == RetrainJob.Status.SCORING and job.artifact and job.ranking_id:
                shards = services.unscored_shards(job)
            else:
                shards = services.train(job)
                jobs.record_host(job.pk, trained=True)
    except jobs.Superseded:
        return "superseded"
    except jobs.TRANSIENT_DB_ERRORS as error:
        jobs.drop_broken_connection()
        if self.request.retries < self.max_retries:
            log.warning("retrain job %s attempt %s hit a database error (retrying): %s", job.pk, job.attempt, error)
            try:
                jobs.release(job.pk, job.attempt)
                unreleased = None
            except jobs.TRANSIENT_DB_ERRORS:  # still down: the retry gives the lease up before it claims
                jobs.drop_broken_connection()
                unreleased = job.attempt
            raise self.retry(exc=error, countdown=DB_RETRY_SECONDS, kwargs={"release": unreleased})
        _record_failure(job, error)
        raise
    except Exception as error:  # noqa: BLE001 - every failure ends the job, the current model stays
        _record_failure(job, error)
        raise
    job.refresh_from_db()
    _score_then_publish(job, shards)
    return f"attempt {job.attempt}: {len(shards)} shards"


def _score_then_publish(job: RetrainJob, shards: list[list[int]], rescues: int = 0) -> None:
    """A chord of the model's evaluation (unless done) and the shards' scoring, whose body publishes the job;
    its error callback may rescue it. The evaluation comes first, so that the first free process takes it."""
    body = publish.si(job.pk, job.attempt)
    header = [] if services.evaluated(job) else [evaluate_model.si(job.pk, job.attempt)]
    header += [score_shard.si(job.pk, job.attempt, shard) for shard in shards]
    if header:
        chord(header)(body.on_error(shard_failed.si(job.pk, job.attempt, rescues)))
    else:
        body.delay()


def _record_failure(job: RetrainJob, error: BaseException) -> None:
    """End the job as failed, on a new connection when the error left this one dead."""
    jobs.drop_broken_connection()
    jobs.fail(job.pk, job.attempt, services.describe(error))


@shared_task(name="learning.score_shard", bind=True, max_retries=DB_RETRIES)
def score_shard(self, job_id: int, attempt: int, document_ids: list[int]) -> int:
    """Score one shard; a transient database error retries it (scoring a shard again replaces its rows), and
    only when the retries are spent does the error reach the chord, whose error callback fails the job."""
    try:
        job = jobs.current(job_id, attempt, RetrainJob.Status.SCORING)
        if job is None:
            return 0
        with jobs.lease(job):
            stored = services.score(job, document_ids)
            jobs.record_host(job_id, scored=stored)
        done = scored_so_far(job)
    except jobs.TRANSIENT_DB_ERRORS as error:
        jobs.drop_broken_connection()
        log.warning("scoring a shard of retrain job %s hit a database error (retrying): %s", job_id, error)
        raise self.retry(exc=error, countdown=DB_RETRY_SECONDS)
    jobs.notify(job, "scoring", f"Scored {done} of {job.pool_size} pool records…", done=done, total=job.pool_size)
    return stored


@shared_task(name="learning.evaluate", bind=True, max_retries=DB_RETRIES)
def evaluate_model(self, job_id: int, attempt: int) -> str:
    """Evaluate the job's model beside the scoring (``services.evaluate``); a transient database error retries
    it, as a shard's does."""
    try:
        job = jobs.current(job_id, attempt, RetrainJob.Status.SCORING)
        if job is None:
            return "not current"
        with jobs.lease(job):
            services.evaluate(job)
    except jobs.Superseded:
        return "superseded"
    except jobs.TRANSIENT_DB_ERRORS as error:
        jobs.drop_broken_connection()
        log.warning("evaluating the model of retrain job %s hit a database error (retrying): %s", job_id, error)
        raise self.retry(exc=error, countdown=DB_RETRY_SECONDS)
    return "evaluated"


@shared_task(name="learning.publish")
def publish(job_id: int, attempt: int) -> int | None:
    version = services.publish(job_id, attempt)
    if version is None:
        return None
    follow = jobs.after_end(version.job)
    if follow is not None:
        enqueue(follow)
    if (version.job.result.get("fit") or {}).get("cold_fit_due"):  # once this ranking is served, not before
        refit.delay(version.job.project_id)
    return version.pk


#: How many times a job's scoring is sent again after its chord failed, before the job fails.
SHARD_RESCUES = 2


@shared_task(name="learning.shard_failed")
def shard_failed(job_id: int, attempt: int, rescues: int = 0) -> None:
    """A task of the chord (a shard, or the evaluation) failed — or only its result was lost: a shard scored
    while Redis, the result backend, restarts is stored in the database but reported to the chord as failed.
    Rather than end the job (and the loop waiting for the next batch), the pool still unscored, and the
    evaluation unless done, are sent again in a new chord, which publishes when every part is in (scoring a
    shard again replaces its rows); only after ``SHARD_RESCUES`` rescues does the job fail."""
    jobs.drop_broken_connection()
    job = jobs.current(job_id, attempt, RetrainJob.Status.SCORING)
    if job is not None and rescues < SHARD_RESCUES:
        shards = services.unscored_shards(job)
        log.warning("retrain job %s attempt %s: a shard failed; scoring the %s unscored shard(s) again",
                    job_id, attempt, len(shards))
        _score_then_publish(job, shards, rescues + 1)
        return
    jobs.fail(job_id, attempt, "scoring a part of the pool failed (see the worker's log)")


@shared_task(name="learning.refit")
def refit(project_id: int) -> str:
    """Start fitting the project's tagger from zero, in a low-priority process of its own, for its next
    retrain to continue from (a repeated or concurrent message finds the base waiting, or the refit under way,
    and does nothing)."""
    return "started" if cold_refit.start(project_id) else "nothing to do"


@shared_task(name="learning.recover_jobs")
def recover_jobs() -> list[int]:
    """Resume every active job whose worker died or whose lease ran out."""
    jobs.end_dead_attempts()
    stalled = jobs.stalled_jobs()
    for job_id in stalled:
        log.warning("resuming stalled retrain job %s", job_id)
        retrain.delay(job_id)
    return stalled


@shared_task(name="learning.simulate")
def simulate_project(run_id: int) -> str:
    from learning.services.simulations import run_simulation

    run = run_simulation(run_id)
    return "not claimed" if run is None else f"{run.status} in {(run.finished_at - run.started_at).total_seconds():.0f} s"


@shared_task(name="learning.cluster")
def cluster(clustering_id: int) -> str:
    """Compute a queued clustering; a repeated message finds it claimed and does nothing."""
    from learning.services.clustering import run_clustering

    clustering = run_clustering(clustering_id)
    if clustering is None:
        return "not claimed"
    return f"{clustering.status}: {clustering.k} clusters" if not clustering.error else f"failed: {clustering.error}"


@shared_task(name="learning.deid_model")
def train_deid_model(model_id: int) -> str:
    """Train a queued de-identification model; a repeated message finds it claimed and does nothing."""
    from learning.services.deid_model import run_deid_model

    model = run_deid_model(model_id)
    if model is None:
        return "not claimed"
    return f"failed: {model.error}" if model.error else f"{model.status} in {model.train_seconds or 0:.0f} s"


def request_deid_model(*, project, user, request=None) -> tuple[DeidModel, bool]:
    """A lead's de-identification model (page or API): queued and sent to the workers once committed, unless one
    is under way."""
    from django.db import transaction

    from learning.services.deid_model import request_deid_model as queue

    model, created = queue(project=project, user=user, request=request)
    if created:
        transaction.on_commit(lambda: train_deid_model.delay(model.pk))
    return model, created


def enqueue_clustering(clustering: Clustering) -> None:
    """Send a queued clustering to the workers once the transaction that created it has committed."""
    from django.db import transaction

    transaction.on_commit(lambda: cluster.delay(clustering.pk))


def request_lead_retrain(*, project, user) -> tuple[RetrainJob, bool]:
    """A lead's retrain (page or API): queued now, or — while one runs — marked to follow the one under way."""
    job, created = jobs.request_retrain(project=project, reason=RetrainJob.Reason.LEAD, user=user, force=True)
    if created:
        enqueue(job)
    return job, created


def request_first_model(*, project) -> RetrainJob | None:
    """The first retrain of a project that has gold and no model yet (``./deidloop up`` at its first start),
    queued for the workers; None when the project has no gold yet, or a model, or a retrain under way (one
    whose worker died is resumed by ``recover_jobs``)."""
    if ModelVersion.objects.filter(project=project, is_current=True).exists() or not submission_count(project=project):
        return None
    if retrain_active(project_id=project.pk):
        return None
    job, created = jobs.request_retrain(project=project, reason=RetrainJob.Reason.COMMAND, force=True)
    if not created:
        return None
    enqueue(job)
    return job


def enqueue(job: RetrainJob) -> None:
    """Send a job to the workers once the transaction that created it has committed."""
    from django.db import transaction

    transaction.on_commit(lambda: retrain.delay(job.pk))


@worker_init.connect
def _end_dead_attempts_on_start(sender=None, **kwargs) -> None:
    """Before this worker takes any message: a worker that died (SIGKILL) left its jobs' attempts current, and
    their queued shards would be taken first and hold the job (see ``jobs.end_dead_attempts``)."""
    try:
        jobs.end_dead_attempts()
    except jobs.TRANSIENT_DB_ERRORS as error:  # the database is away: recover_jobs does it when it is back
        log.warning("could not check for retrain jobs of dead workers at start: %s", error)
    finally:
        connections.close_all()  # the pool forks its processes from this one: no connection may be shared


@worker_process_init.connect
def _share_features(sender=None, **kwargs) -> None:
    """Every pool process of this worker reads and writes records' features through the database, so that
    a fresh process (or another host) need not featurize what another already did (``feature_store``). Set in
    each pool process as it starts, not in the main process: that one never featurizes, and stays free of the
    feature code's libraries (scipy) while the worker idles."""
    feature_store.share_features()


_heartbeat: workers.Heartbeat | None = None


@worker_ready.connect
def _recover_on_start(sender=None, **kwargs) -> None:
    """Start this worker's heartbeat (``./deidloop manage status`` reads it; a worker whose heartbeat stops
    has its jobs resumed by the others), which also runs the watchdog — resume what dead workers left — at
    once and then once a minute."""
    global _heartbeat
    _heartbeat = workers.Heartbeat(sender, on_lost=_resume_work_of_lost_workers, watchdog=_watchdog)
    _heartbeat.start()


def _watchdog() -> None:
    """``recover_jobs`` run here, in the worker's main process, rather than sent: an idle worker then gets
    no message, and its pool shrinks (``IdleAutoscaler``); only a stalled job sends one (its retrain)."""
    try:
        recover_jobs()
    finally:
        connections.close_all()  # the main process forks pool processes: keep no connection open


@task_prerun.connect
def _check_the_connection_before_a_task(sender=None, **kwargs) -> None:
    """A worker process keeps its database connection from task to task (``CELERY_DB_REUSE_MAX``): as before a
    request, Django closes it when it is too old (``CONN_MAX_AGE``) or unusable, and checks it before its first
    query (``CONN_HEALTH_CHECKS``), so a database restarted meanwhile costs a new connection, not the task.
    A task run eagerly (in the caller's process and transaction) is left alone."""
    request = getattr(sender, "request", None)
    if not getattr(request, "is_eager", False):
        close_old_connections()


@task_received.connect
def _beat_on_taking_a_task(sender=None, **kwargs) -> None:
    """The heartbeat names a task as soon as the worker takes it from the broker: a worker lost with a shard
    it had just taken has that shard scored again at once (see ``_resume_work_of_lost_workers``)."""
    if _heartbeat is not None:
        _heartbeat.wake()


@worker_shutdown.connect
def _stop_heartbeat(sender=None, **kwargs) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()


def _resume_work_of_lost_workers(lost: list[dict]) -> None:
    """A worker (of any host) stopped sending heartbeats: end the attempts of the jobs it owned or was scoring
    a shard of, and resume them here and now rather than when their lease runs out."""
    processes = {f"{record['host']}:{pid}" for record in lost for pid in [record["pid"], *record.get("processes", [])]}
    held = [task for record in lost for task in [*record.get("running", []), *record.get("reserved", [])]]
    shards = [tuple(task["args"][:2]) for task in held if task["task"] == score_shard.name and len(task["args"]) >= 2]
    ended = set(jobs.end_attempts_lost_with(processes=processes, shards=shards))
    if ended:
        recover_jobs.delay()
    # A retrain it had taken but not claimed yet is lost with it too: sent again unless recover_jobs (just
    # sent) resumes the job, or a live attempt holds it meanwhile, or it ended. A second message could reach
    # the very process that holds the job, which would take its own job over as a new attempt and score it
    # all over again.
    for job_id in {task["args"][0] for task in held if task["task"] == retrain.name and task["args"]}:
        if job_id not in ended and jobs.waits_for_an_attempt(job_id):
            retrain.delay(job_id)

