"""Reads of the learning app: the state of a project's loop as its lead sees it."""
from __future__ import annotations

from typing import Any, Callable

from annotator.models import Project
from annotator.selectors import project_overview, ranking_top, scored_count, submission_count
from learning.core.registry import live_params, tagger_factory
from learning.models import ModelVersion, RetrainJob, SilverSentence
from learning.selectors.measured_costs import cost_fits


def loop_tagger(project: Project, *, seed: int = 0) -> tuple[str, dict[str, Any], Callable[[], Any]]:
    """The tagger a project's loop trains: its kind, the project's own parameters, and a factory of fresh
    taggers with those over the live loop's defaults and what the tagger takes from the project
    (:func:`project_settings`)."""
    kind, params = project.tagger.get("kind", "crf"), dict(project.tagger.get("params", {}))
    return kind, params, tagger_factory(kind, seed=seed, **live_params(kind, params), **project_settings(project, kind))


def project_settings(project: Project, kind: str) -> dict[str, Any]:
    """What a tagger of ``kind`` takes from its project beyond its parameters: a CRF reads the project's
    gazetteers, and its documents with a vocabulary of the project's own (shared between worker processes,
    ``learning.services.feature_store``)."""
    if kind != "crf":
        return {}
    return {"vocabulary_scope": str(project.pk), **({"gazetteers": project.gazetteers} if project.gazetteers else {})}


def loop_recall_bias(project: Project) -> float | dict[str, float] | None:
    """The β the retrain tunes the suggestions' recall bias for: None (off), one β for every PHI type (one pair
    of thresholds), or ``{type: β}`` when the lead set a β of its own for some type (a pair per type; a type
    whose β is 0, or that has none, keeps the model's labels)."""
    every = project.recall_bias_beta or None
    own = project.recall_bias_betas or {}
    if not own:
        return every
    betas = {**dict.fromkeys(project.labels, every), **own}
    return {kind: float(beta) for kind, beta in betas.items() if beta} or None


def scored_so_far(job: RetrainJob) -> int:
    return scored_count(ranking_id=job.ranking_id) if job.ranking_id else 0


def submissions_at_last_request(project: Project) -> int:
    """Submissions counted by the last job that did not fail (a failed job's batch still counts as new)."""
    last = (RetrainJob.objects.filter(project=project).exclude(status=RetrainJob.Status.FAILED)
            .order_by("-created_at", "-pk").values_list("submissions_at_request", flat=True).first())
    return last or 0


def job_progress(job: RetrainJob) -> dict:
    """Stage and, while scoring, how much of the pool is done (0-100)."""
    done = scored_so_far(job) if job.status == RetrainJob.Status.SCORING else 0
    percent = {RetrainJob.Status.QUEUED: 0, RetrainJob.Status.TRAINING: 5}.get(job.status)
    if job.status == RetrainJob.Status.SCORING:
        percent = 10 + round(90 * done / job.pool_size) if job.pool_size else 95
    return {"job": job.pk, "status": job.status, "stage": job.get_status_display(), "done": done,
            "total": job.pool_size, "percent": percent, "attempt": job.attempt, "follow_up": job.follow_up}


def retrain_active(*, project_id: int) -> bool:
    """Whether a retrain of the project is queued or under way."""
    return RetrainJob.objects.filter(project_id=project_id, status__in=RetrainJob.ACTIVE).exists()


def loop_state(*, project: Project) -> dict:
    current = ModelVersion.objects.filter(project=project, is_current=True).first()
    active = RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).first()
    submissions = submission_count(project=project)
    return {
        "model": current,
        "active": active,
        "progress": job_progress(active) if active else None,
        "jobs": list(RetrainJob.objects.filter(project=project).select_related("requested_by")[:10]),
        "overview": project_overview(project=project),
        "submissions": submissions,
        "new_submissions": max(submissions - submissions_at_last_request(project), 0),
        "ranking": ranking_top(project=project),
        "costs": cost_fits(project=project),
        "silver": SilverSentence.objects.filter(project=project).count(),
        "silver_examples": list(SilverSentence.objects.filter(project=project).select_related("document")[:5]),
    }
