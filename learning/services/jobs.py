"""The life of a retrain job: asked for (by a batch of submissions or a lead), claimed by one worker
process at a time under a lease, taken over when its process dies, and ended exactly once.

Ownership is a row in the database, not a message in the broker: a message delivered twice (``acks_late``
redelivers what a killed worker did not finish) finds the job claimed or ended and does nothing.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from contextlib import contextmanager
from datetime import timedelta
from typing import Callable, Iterable, Iterator

from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from annotator.models import Project
from annotator.selectors import submission_count
from annotator.services.notify import notify_project
from learning.models import RetrainJob
from learning.selectors.loop import submissions_at_last_request
from learning.services import model_store

log = logging.getLogger(__name__)

#: A claim lasts this long unless renewed; the process holding it renews it every LEASE_RENEW_SECONDS.
LEASE_SECONDS = 90
LEASE_RENEW_SECONDS = 15
#: A fit from zero runs in crfsuite's C code, which holds the interpreter lock to its end: the thread that
#: renews the lease cannot run meanwhile, and a worker of another machine would take a live attempt over (and
#: then lose its own the same way). Before a fit the lease is taken for as long as a fit from zero on that
#: much text may last: this many seconds per million characters, on top of LEASE_SECONDS — about five times
#: what fits on MEDDOCAN take (500 records, 1.45 million characters: 40–80 s). A process of this machine is
#: seen alive or dead whatever its lease; one of another machine that dies mid-fit is resumed when its
#: worker's heartbeat stops, or else when this longer lease runs out.
FIT_LEASE_SECONDS_PER_MILLION_CHARACTERS = 200

#: The errors of a database that went away (restarted, connection dropped): worth another try on a new
#: connection, unlike an error in the work itself.
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)


def drop_broken_connection() -> None:
    """After a database error, close this thread's connection if it no longer works, so that the next query
    opens a new one (Django would otherwise keep sending queries down the dead one). Never raises; inside an
    atomic block it does nothing, as closing there would only break the transaction further."""
    try:
        if connection.connection is not None and not connection.in_atomic_block and not connection.is_usable():
            connection.close()
    except Exception:  # noqa: BLE001 - closing a dead connection may complain; it is dropped all the same
        log.debug("closing a broken database connection", exc_info=True)
        connection.connection = None


def release(job_id: int, attempt: int) -> None:
    """Give up the attempt's lease at once (after a transient database error), so that the next claim — the
    task's own retry or ``recover_jobs`` — takes the job as the next attempt without waiting for the lease."""
    RetrainJob.objects.filter(pk=job_id, attempt=attempt, status__in=RetrainJob.ACTIVE).update(
        owner="", lease_until=timezone.now()
    )


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str) -> bool:
    """True when ``owner`` (host:pid) is a process of this machine that no longer exists.

    A process on another machine cannot be checked from here: its lease decides.
    """
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    # A killed process whose parent died too stays a zombie until someone reaps it (in a container, often
    # nobody does): it exists, but it works on nothing.
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def owner_is_alive_here(owner: str) -> bool:
    """True when ``owner`` (host:pid) is a live process of this machine: its attempt is under way even when
    its lease ran out — a long fit in C code holds the interpreter lock, and the thread that renews the lease
    cannot run until it ends. Only a process of another machine is judged by its lease alone."""
    host, _, pid = owner.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and not owner_is_dead(owner)


class Superseded(Exception):
    """The attempt was taken over by another one; its work is thrown away."""


def notify(job: RetrainJob, stage: str, text: str, **data) -> None:
    """Progress of a job, to every open page of its project."""
    notify_project(project_id=job.project_id, kind="retrain_progress", text=text,
                   data={"job": job.pk, "stage": stage, **data})


# Asking for a retrain -----------------------------------------------------------------------------------

def request_retrain(
    *, project: Project, reason: str, user=None, force: bool = False
) -> tuple[RetrainJob | None, bool]:
    """Queue a retrain of ``project`` unless one is active: (the job that will serve the request, created?).

    A batch request (``force`` False) is only made when ``project.batch_size`` submissions arrived since the
    last job was asked for. A forced request (a lead's) made while a job is active marks that job to be
    followed by another, so what changed in the meantime (settings, submissions) is not lost.
    Returns (None, False) when a batch request finds too few new submissions.
    """
    if not force:
        # Every submission asks; while a job is active (most of the time under load) the answer needs no lock:
        # the job, when it ends, counts the submissions that came meanwhile (this one committed before it
        # asked) and queues the next retrain itself.
        active = RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).order_by("pk").first()
        if active is not None:
            return active, False
        # Nor does a submission that leaves the batch incomplete (most of them): each one counts after its own
        # commit, so the one that completes a batch sees it whole, and it alone goes on to the lock.
        if _too_few_new(project, submission_count(project=project)):
            return None, False
    with transaction.atomic():
        _one_request_at_a_time(project)
        # The active job's row is locked and its status read again under the lock, as the processes that end
        # a job (publish, fail) lock that row: marked for a follow-up before it ends, the job's ending reads
        # the mark; ended first, it is no longer active and a new job is queued. (Unlocked, a mark made while
        # the job was being published would go unread, and the lead's retrain would be lost.)
        active = (
            RetrainJob.objects.select_for_update(of=("self",)).filter(project=project, status__in=RetrainJob.ACTIVE)
            .order_by("pk").first()
        )
        if active is not None:
            if force and not active.follow_up:
                RetrainJob.objects.filter(pk=active.pk).update(follow_up=True)
            return active, False
        submissions = submission_count(project=project)
        if not force and _too_few_new(project, submissions):
            return None, False
        try:
            with transaction.atomic():
                job = RetrainJob.objects.create(
                    project=project, reason=reason, requested_by=user if getattr(user, "pk", None) else None,
                    submissions_at_request=submissions,
                )
        except IntegrityError:  # another process won the race for the one active slot
            return RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).first(), False
    notify(job, "queued", "A retrain is queued.")
    return job, True


def _too_few_new(project: Project, submissions: int) -> bool:
    """Have fewer than a batch of the project's ``submissions`` come since the last retrain that did not fail
    was asked for?"""
    return submissions - submissions_at_last_request(project) < max(project.batch_size, 1)


def _one_request_at_a_time(project: Project) -> None:
    """Serialise the retrain requests of ``project`` until the transaction ends.

    An advisory lock, not the project's row: the processes ending a job lock the job's row and, through
    RetrainJob's ordering on ``project``, the project's row with it, so a request that held the project's row
    while it waited for the job's would deadlock with them.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                       [f"deidloop.request_retrain:{project.pk}"])


# Claiming and holding a job -----------------------------------------------------------------------------

def claim(job_id: int) -> RetrainJob | None:
    """Take the job for this process as a new attempt, or None when it is ended or held by a live attempt."""
    now = timezone.now()
    with transaction.atomic():
        job = RetrainJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or not job.is_active:
            return None
        held = job.owner and ((job.lease_until and job.lease_until > now and not owner_is_dead(job.owner))
                              or owner_is_alive_here(job.owner))
        if held and job.owner != this_process():
            return None
        job.attempt += 1
        job.owner = this_process()
        job.lease_until = now + timedelta(seconds=LEASE_SECONDS)
        job.started_at = job.started_at or now
        if job.status == RetrainJob.Status.QUEUED:
            job.status = RetrainJob.Status.TRAINING
        job.save(update_fields=["attempt", "owner", "lease_until", "started_at", "status"])
    if job.attempt > 1:
        log.warning("retrain job %s taken over as attempt %s", job.pk, job.attempt)
    return job


def current(job_id: int, attempt: int, *statuses: str) -> RetrainJob | None:
    """The job if ``attempt`` is still its attempt (and it is in one of ``statuses``), else None."""
    job = RetrainJob.objects.filter(pk=job_id, attempt=attempt).first()
    if job is None or (statuses and job.status not in statuses):
        return None
    return job


@contextmanager
def lease(job: RetrainJob) -> Iterator[None]:
    """Hold the job's lease while the block runs: a thread renews it for this process and attempt."""
    stop = threading.Event()
    me = this_process()

    def renew() -> None:
        # A database error (a restart, a dropped connection) must not end the renewals, or the lease would
        # run out under a live attempt: the broken connection is dropped and the next tick tries again.
        try:
            while not stop.wait(LEASE_RENEW_SECONDS):
                try:
                    _extend_lease(job, me)
                except (DatabaseError, InterfaceError) as error:
                    log.warning("could not renew the lease of retrain job %s (will retry): %s", job.pk, error)
                    drop_broken_connection()
        finally:
            try:
                connection.close()
            except Exception:  # noqa: BLE001 - the thread ends either way
                pass

    _extend_lease(job, me)
    thread = threading.Thread(target=renew, name=f"lease-{job.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def _extend_lease(job: RetrainJob, owner: str) -> None:
    """Renew the lease for LEASE_SECONDS from now, never shortening a longer one taken for a fit."""
    RetrainJob.objects.filter(pk=job.pk, attempt=job.attempt).update(
        owner=owner, lease_until=Greatest(F("lease_until"), Value(timezone.now() + timedelta(seconds=LEASE_SECONDS)))
    )


@contextmanager
def fitting(job: RetrainJob, *, characters: int) -> Iterator[None]:
    """Hold the lease through a fit on ``characters`` of text (see FIT_LEASE_SECONDS_PER_MILLION_CHARACTERS),
    then give it back its usual length."""
    me = this_process()
    seconds = LEASE_SECONDS + FIT_LEASE_SECONDS_PER_MILLION_CHARACTERS * characters / 1_000_000
    RetrainJob.objects.filter(pk=job.pk, attempt=job.attempt).update(
        owner=me, lease_until=timezone.now() + timedelta(seconds=seconds))
    try:
        yield
    finally:
        try:
            RetrainJob.objects.filter(pk=job.pk, attempt=job.attempt).update(
                lease_until=timezone.now() + timedelta(seconds=LEASE_SECONDS))
        except (DatabaseError, InterfaceError) as error:  # the renewals go on; the long lease runs out
            log.warning("could not shorten the lease of retrain job %s after its fit: %s", job.pk, error)


def end_dead_attempts() -> list[int]:
    """End the attempt of every active job whose owner is a dead process of this machine; return their ids.

    The attempt number moves on and the lease is dropped, so that the dead attempt's messages still queued
    (its scoring shards) find it stale and do nothing: left current, they would be scored by the next worker,
    renew the lease under a live process and keep the job from being resumed, while the shard the dead
    process had taken stays unacknowledged in the broker and the attempt's chord never completes. The next
    claim (``recover_jobs``) resumes the job from what the dead attempt saved.
    """
    ended = _end_attempts(lambda job: bool(job.owner) and owner_is_dead(job.owner))
    for job_id in ended:
        log.warning("the process working on retrain job %s died; its attempt is ended", job_id)
    return ended


def end_attempts_lost_with(*, processes: Iterable[str], shards: Iterable[tuple[int, int]]) -> list[int]:
    """End the attempt of every active job a lost worker was working on — a worker of any host whose
    heartbeat stopped (``learning.services.workers``) — and return their ids: the jobs owned by one of its
    ``processes`` (host:pid), and those whose attempt is one of ``shards`` ((job id, attempt) of the shards it
    was scoring). A shard it had taken is lost with it, unacknowledged in the broker, so that attempt's chord
    can never complete, whichever live process holds the lease now; the next claim scores what is missing.
    """
    owners, attempts = set(processes), {(int(job_id), int(attempt)) for job_id, attempt in shards}
    ended = _end_attempts(lambda job: job.owner in owners or (job.pk, job.attempt) in attempts)
    for job_id in ended:
        log.warning("a worker working on retrain job %s stopped sending heartbeats; its attempt is ended", job_id)
    return ended


def _end_attempts(lost: Callable[[RetrainJob], bool]) -> list[int]:
    """Move the attempt of every active job ``lost`` picks on and drop its lease, under the jobs' row locks."""
    ended = []
    with transaction.atomic():
        for job in RetrainJob.objects.select_for_update(of=("self",)).filter(status__in=RetrainJob.ACTIVE):
            if lost(job):
                RetrainJob.objects.filter(pk=job.pk).update(
                    attempt=job.attempt + 1, owner="", lease_until=timezone.now()
                )
                ended.append(job.pk)
    return ended


def stalled_jobs() -> list[int]:
    """Active jobs nobody is working on: their process died, or their lease ran out (or was never taken
    although the job waited longer than a lease)."""
    now = timezone.now()
    return [job.pk for job in RetrainJob.objects.filter(status__in=RetrainJob.ACTIVE) if is_stalled(job, now=now)]


def waits_for_an_attempt(job_id: int) -> bool:
    """Is the job active with no attempt working on it: never claimed, its last attempt ended, or stalled?"""
    job = RetrainJob.objects.filter(pk=job_id, status__in=RetrainJob.ACTIVE).first()
    return job is not None and (not job.owner or is_stalled(job))


def is_stalled(job: RetrainJob, *, now=None) -> bool:
    """Is this active job one nobody is working on (see ``stalled_jobs``)?"""
    now = now or timezone.now()
    if job.owner and owner_is_dead(job.owner):
        return True
    if job.lease_until is not None:
        return job.lease_until < now and not owner_is_alive_here(job.owner)
    return job.created_at < now - timedelta(seconds=LEASE_SECONDS)


def record_host(job_id: int, *, trained: bool = False, scored: int = 0) -> None:
    """Note on the job's result which host did its work: the host that trained it (``trained_on``), and how
    many pool records each host scored (``scored_on``). Under the job's row lock, as shards end at once on
    several hosts."""
    with transaction.atomic():
        job = RetrainJob.objects.select_for_update(of=("self",)).filter(pk=job_id).first()
        if job is None or not (trained or scored):
            return
        result, host = dict(job.result or {}), socket.gethostname()
        if trained:
            result["trained_on"] = host
        if scored:
            counts = dict(result.get("scored_on") or {})
            counts[host] = counts.get(host, 0) + scored
            result["scored_on"] = counts
        job.result = result
        job.save(update_fields=["result"])


# Ending a job ---------------------------------------------------------------------------------------------

def fail(job_id: int, attempt: int, error: str) -> bool:
    """Mark the attempt's job failed (the current model and ranking stay); False if the attempt is stale."""
    from annotator.services.ranking import discard_ranking

    with transaction.atomic():
        job = RetrainJob.objects.select_for_update().filter(pk=job_id, attempt=attempt).first()
        if job is None or not job.is_active:
            return False
        job.status = RetrainJob.Status.FAILED
        job.error = error[:10_000]
        job.finished_at = timezone.now()
        job.owner = ""
        job.save(update_fields=["status", "error", "finished_at", "owner"])
        if job.ranking_id:
            discard_ranking(ranking_id=job.ranking_id)
        model_store.delete(job.artifact)
    log.error("retrain job %s failed: %s", job_id, error)
    notify(job, "failed", "The retrain failed; the current model and ranking stay in place.", error=error[:500])
    return True


def after_end(job: RetrainJob) -> RetrainJob | None:
    """What follows an ended job: another retrain when one was asked for meanwhile or a batch filled up."""
    project = Project.objects.get(pk=job.project_id)
    if job.follow_up:
        follow, created = request_retrain(project=project, reason=RetrainJob.Reason.FOLLOW_UP, force=True)
    else:
        follow, created = request_retrain(project=project, reason=RetrainJob.Reason.BATCH)
    return follow if created else None
