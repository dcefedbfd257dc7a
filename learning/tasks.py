"""Every Celery task of learning: retrain a project, score its pool in shards (a chord), publish, recover;
run a simulation; compute stylometric clusters.

Every task is idempotent: ``retrain`` claims the job in the database before working on it, and shard and
publish tasks carry the attempt they belong to, so a message delivered twice, or one left over from an
attempt that was taken over, does nothing. With ``acks_late`` a message is only acknowledged once its task
ended; a worker killed mid-task leaves the job's lease to run out (or its process to be seen dead), and
``recover_jobs`` — run when a worker starts and every minute by beat — resumes it.
"""
from __future__ import annotations

import logging

from celery import chord, shared_task
from celery.signals import worker_ready

from learning.services import jobs, retrain as services
from learning.models import Clustering, RetrainJob
from learning.selectors.loop import scored_so_far

log = logging.getLogger(__name__)


@shared_task(name="learning.retrain")
def retrain(job_id: int) -> str:
    """Claim the job and train (or, when a dead attempt already trained, go on with scoring)."""
    job = jobs.claim(job_id)
    if job is None:
        return "not claimed"
    try:
        with jobs.lease(job):
            if job.status == RetrainJob.Status.SCORING and job.artifact and job.ranking_id:
                shards = services.unscored_shards(job)
            else:
                shards = services.train(job)
    except jobs.Superseded:
        return "superseded"
    except Exception as error:  # noqa: BLE001 - every failure ends the job, the current model stays
        jobs.fail(job.pk, job.attempt, services.describe(error))
        raise
    job.refresh_from_db()
    body = publish.si(job.pk, job.attempt)
    if shards:
        chord([score_shard.si(job.pk, job.attempt, shard) for shard in shards])(
            body.on_error(shard_failed.si(job.pk, job.attempt))
        )
    else:
        body.delay()
    return f"attempt {job.attempt}: {len(shards)} shards"


@shared_task(name="learning.score_shard")
def score_shard(job_id: int, attempt: int, document_ids: list[int]) -> int:
    job = jobs.current(job_id, attempt, RetrainJob.Status.SCORING)
    if job is None:
        return 0
    with jobs.lease(job):
        stored = services.score(job, document_ids)
    done = scored_so_far(job)
    jobs.notify(job, "scoring", f"Scored {done} of {job.pool_size} pool records…", done=done, total=job.pool_size)
    return stored


@shared_task(name="learning.publish")
def publish(job_id: int, attempt: int) -> int | None:
    version = services.publish(job_id, attempt)
    if version is None:
        return None
    follow = jobs.after_end(version.job)
    if follow is not None:
        enqueue(follow)
    return version.pk


@shared_task(name="learning.shard_failed")
def shard_failed(job_id: int, attempt: int) -> None:
    jobs.fail(job_id, attempt, "scoring a part of the pool failed (see the worker's log)")


@shared_task(name="learning.recover_jobs")
def recover_jobs() -> list[int]:
    """Resume every active job whose worker died or whose lease ran out."""
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


def enqueue(job: RetrainJob) -> None:
    """Send a job to the workers once the transaction that created it has committed."""
    from django.db import transaction

    transaction.on_commit(lambda: retrain.delay(job.pk))


@worker_ready.connect
def _recover_on_start(sender=None, **kwargs) -> None:
    recover_jobs.delay()

