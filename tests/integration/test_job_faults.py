"""Retrain jobs under database faults: a connection that dies under a task (PostgreSQL restarted) neither
strands the job nor loses its message, the lease keeps being renewed, and a burst of submissions while a
job's worker is dead sends one recovery, not one per submission.

The faults are made deterministic: a patched service kills the connection it runs on
(``connection.connection.close()``) so that its next query fails as after a restart, once. The tasks run
eagerly, in this process.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from annotator.models import Annotation, Document, PoolScore
from annotator.signals import annotation_submitted
from learning import receivers, tasks
from learning.models import ModelVersion, RetrainJob
from learning.services import jobs, retrain as services

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(loop_project):
    return loop_project


@pytest.fixture(autouse=True)
def _no_dead_connection_left(project):
    """A test that fails with its connection dead must not break the next test's set-up (torn down before the
    database fixtures, as it depends on them)."""
    yield
    try:
        connection.close()
    except Exception:  # noqa: BLE001
        connection.connection = None


@pytest.fixture
def eager(monkeypatch):
    """Tasks (retries and chords included) run in this process, at once."""
    conf = tasks.retrain.app.conf
    before, conf.task_always_eager = conf.task_always_eager, True
    monkeypatch.setattr(tasks, "DB_RETRY_SECONDS", 0)
    yield
    conf.task_always_eager = before


def _kill_connection() -> None:
    """This thread's connection dies under Django, as when PostgreSQL is restarted."""
    connection.ensure_connection()
    connection.connection.close()


def _failing_once(real, *, then_raise: bool = False):
    """``real``, except that its first call finds the connection dead (and, with ``then_raise``, raises the
    error a restart gives even where the dead connection would not be used again)."""
    calls = []

    def call(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            _kill_connection()
            if then_raise:
                raise OperationalError("terminating connection due to administrator command")
        return real(*args, **kwargs)

    call.calls = calls
    return call


def test_a_database_restart_mid_training_resumes_the_job_as_the_next_attempt(project, eager, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    train = _failing_once(services.train, then_raise=True)
    monkeypatch.setattr(services, "train", train)
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert len(train.calls) == 2
    assert job.status == "done" and job.attempt == 2 and job.error == ""
    assert ModelVersion.objects.get(project=project, is_current=True).pk == job.model_version_id


def test_a_retry_in_another_process_takes_the_job_although_the_database_was_down_for_the_release(
        project, eager, monkeypatch):
    """The database is still down when the failed run tries to give its lease up; the retry — in another
    worker process, as with a prefork pool — gives it up before claiming, instead of finding the job held by
    the first run until the lease runs out (a stall of minutes, until ``recover_jobs``)."""
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    train = _failing_once(services.train, then_raise=True)
    monkeypatch.setattr(services, "train", train)
    real_release, releases = jobs.release, []

    def release_while_down(job_id, attempt):
        releases.append(attempt)
        if len(releases) == 1:
            monkeypatch.setattr(jobs, "this_process", lambda: "worker-host:99999999")  # the retry runs elsewhere
            raise OperationalError("connection failed: Connection refused")
        real_release(job_id, attempt)

    monkeypatch.setattr(jobs, "release", release_while_down)
    monkeypatch.setattr(jobs, "owner_is_dead", lambda owner: False)  # the first run's process lives on
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert releases == [1, 1] and len(train.calls) == 2
    assert job.status == "done" and job.attempt == 2 and job.error == ""


def test_a_database_restarted_while_the_model_is_fitted_costs_no_second_fit(project, eager, monkeypatch):
    """The fit uses no table; a restart during it kills the connection unnoticed. The fitted model is kept:
    one fit, one attempt (before, the first query after the fit failed and the job trained again)."""
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    fits = []

    def fit_during_a_restart(*args, **kwargs):
        fits.append(args)
        model = real_fit(*args, **kwargs)
        _kill_connection()
        return model

    real_fit = services.fit_model
    monkeypatch.setattr(services, "fit_model", fit_during_a_restart)
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert len(fits) == 1 and job.status == "done" and job.attempt == 1 and job.error == ""


def test_when_the_retries_are_spent_the_job_is_recorded_failed_on_a_new_connection(project, eager, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)

    def restarted(job):
        _kill_connection()
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(services, "train", restarted)
    monkeypatch.setattr(tasks.retrain, "max_retries", 1)
    result = tasks.retrain.apply(args=(job.pk,))
    assert isinstance(result.result, OperationalError)
    job.refresh_from_db()
    assert job.status == "failed" and job.attempt == 2 and "administrator command" in job.error
    assert job.owner == "" and not ModelVersion.objects.filter(project=project).exists()


def test_the_lease_thread_keeps_renewing_after_a_database_error(project, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    job = jobs.claim(job.pk)
    monkeypatch.setattr(jobs, "LEASE_RENEW_SECONDS", 0.05)
    real, outcomes = jobs._extend_lease, []

    def extend(job, owner):
        first_renewal = threading.current_thread().name.startswith("lease-") and not outcomes
        if first_renewal:
            _kill_connection()  # the renewing thread's own connection
        try:
            real(job, owner)
        except Exception as error:
            outcomes.append(error)
            raise
        if threading.current_thread().name.startswith("lease-"):
            outcomes.append("renewed")

    monkeypatch.setattr(jobs, "_extend_lease", extend)
    with jobs.lease(job):
        RetrainJob.objects.filter(pk=job.pk).update(lease_until=timezone.now())
        deadline = time.monotonic() + 10
        while outcomes.count("renewed") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert isinstance(outcomes[0], Exception) and outcomes.count("renewed") >= 3, outcomes
    assert RetrainJob.objects.get(pk=job.pk).lease_until > timezone.now() + timedelta(seconds=60)


def test_a_claim_while_the_database_is_down_retries_instead_of_losing_the_message(project, eager, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    claim = _failing_once(jobs.claim)
    monkeypatch.setattr(jobs, "claim", claim)
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert len(claim.calls) == 2
    assert job.status == "done" and job.attempt == 1


def test_a_scoring_shard_hit_by_a_database_error_is_retried(project, eager, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    score = _failing_once(services.score)
    monkeypatch.setattr(services, "score", score)
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert len(score.calls) == job.shards + 1
    assert PoolScore.objects.filter(ranking_id=job.ranking_id).count() == 25


def test_a_burst_of_submissions_sends_one_recovery_per_window(project, monkeypatch):
    job, _ = jobs.request_retrain(project=project, reason="batch")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    RetrainJob.objects.filter(pk=job.pk).update(
        status="training", attempt=1, owner=f"{jobs.this_process().rpartition(':')[0]}:{child.pid}",
        lease_until=timezone.now() + timedelta(minutes=5),
    )
    assert jobs.stalled_jobs() == [job.pk]  # its worker is dead
    sent = []
    monkeypatch.setattr(tasks.recover_jobs, "delay", lambda *a, **k: sent.append(1))
    monkeypatch.setattr(receivers, "RECOVERY_WINDOW_SECONDS", 2)
    from django.core.cache import cache

    cache.delete(f"deidloop:recover_jobs:{connection.settings_dict['NAME']}:{job.pk}")
    document = Document.objects.filter(project=project, role="pool", status="pool").first()
    annotation = Annotation.objects.create(document=document, spans=[], state="submitted",
                                           submitted_at=timezone.now())
    barrier = threading.Barrier(10)

    def submit_five():
        barrier.wait()
        try:
            for _ in range(5):
                annotation_submitted.send(sender=Annotation, annotation=annotation)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit_five) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sent) == 1  # 50 submissions, one recovery
    time.sleep(2.2)
    annotation_submitted.send(sender=Annotation, annotation=annotation)
    assert len(sent) == 2  # the next window sends again


def test_a_shard_reported_failed_after_it_was_scored_is_rescued_not_the_job(project, eager, monkeypatch):
    """Redis restarting as a shard ends: the shard's rows are stored, yet the chord is told it failed and calls
    its error callback. The callback sends the unscored rest of the pool again, and the job publishes; it fails
    only once its rescues are spent. (Run eagerly, a failed header task raises out of the chord instead of
    calling the callback, so the test calls the callback as the chord would.)"""
    job, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    real = services.score

    def score_then_lose_the_result(job, document_ids):
        real(job, document_ids)
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(services, "score", score_then_lose_the_result)
    tasks.retrain.apply(args=(job.pk,))
    job.refresh_from_db()
    assert job.status == "scoring" and not ModelVersion.objects.filter(job=job).exists()  # stuck before the rescue
    monkeypatch.setattr(services, "score", real)
    tasks.shard_failed.apply(args=(job.pk, job.attempt, 0))
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert ModelVersion.objects.filter(job=job, is_current=True).exists()
    assert PoolScore.objects.filter(ranking_id=job.ranking_id).count() == 25

    # Once the rescues are spent, the job fails and the current model stays.
    second, _ = jobs.request_retrain(project=project, reason="lead", force=True)
    monkeypatch.setattr(services, "score", score_then_lose_the_result)
    tasks.retrain.apply(args=(second.pk,))
    second.refresh_from_db()
    tasks.shard_failed.apply(args=(second.pk, second.attempt, tasks.SHARD_RESCUES))
    second.refresh_from_db()
    assert second.status == "failed" and "scoring a part of the pool failed" in second.error
    assert ModelVersion.objects.get(is_current=True).job == job
