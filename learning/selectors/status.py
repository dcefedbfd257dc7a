"""What ``./deidloop manage status`` reports: the live workers and their hosts, the queues, and per project its
last retrain — when, how it ended, which hosts trained and scored it, and where its time went."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from annotator.models import Project
from learning.models import RetrainJob
from learning.services import workers


def status_report() -> dict[str, Any]:
    live = workers.live_workers()
    queues = {settings.CELERY_TASK_DEFAULT_QUEUE, *(queue for worker in live for queue in worker.get("queues", []))}
    return {
        "at": workers.now_iso(),
        "workers": live,
        "hosts": sorted({worker["host"] for worker in live}),
        "queues": workers.queue_lengths(queues),
        "retrains": last_retrains(),
    }


def last_retrains() -> list[dict[str, Any]]:
    """The newest retrain job of each project that has one, by project name."""
    names = dict(Project.objects.values_list("pk", "name"))
    newest = (RetrainJob.objects.select_related("model_version").order_by("project_id", "-created_at", "-pk")
              .distinct("project_id"))
    rows = [_retrain(job, names.get(job.project_id, "")) for job in newest]
    return sorted(rows, key=lambda row: (row["project"], row["project_id"]))


def _retrain(job: RetrainJob, project: str) -> dict[str, Any]:
    result, version = job.result or {}, job.model_version
    scoring_end = job.finished_at or (None if not job.is_active else timezone.now())
    scoring = (version.scoring_seconds if version is not None and version.scoring_seconds is not None
               else _seconds(job.trained_at, scoring_end))
    return {
        "project": project, "project_id": job.project_id, "job": job.pk, "reason": job.reason,
        "status": job.status, "attempt": job.attempt, "model_version": job.model_version_id,
        "asked_at": _iso(job.created_at), "started_at": _iso(job.started_at), "trained_at": _iso(job.trained_at),
        "finished_at": _iso(job.finished_at),
        "trained_on": result.get("trained_on"), "scored_on": dict(result.get("scored_on") or {}),
        "seconds": {
            "waiting": _seconds(job.created_at, job.started_at or (timezone.now() if job.is_active else None)),
            "training": result.get("train_seconds"),
            "scoring": scoring,
            "total": _seconds(job.created_at, job.finished_at),
        },
        "error": job.error.strip().splitlines()[0] if job.error.strip() else "",
    }


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else round((end - start).total_seconds(), 3)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment is not None else None
