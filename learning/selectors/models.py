"""Reads of a project's trained models for other apps: the current model version and its tagger, ready to
predict (deid de-identifies new text with it)."""
from __future__ import annotations

from typing import Any

from annotator.models import Project
from learning.core.recall_bias import stored_thresholds
from learning.models import DeidModel, ModelVersion
from learning.services import model_store
from learning.services.model_store import load_model


def current_model(project: Project) -> ModelVersion | None:
    """The project's current, ready model version (None before the first model)."""
    return (ModelVersion.objects.filter(project=project, is_current=True, status=ModelVersion.Status.READY)
            .first())


def current_tagger(project: Project) -> tuple[ModelVersion, Any] | None:
    """The current model version and its tagger (verified before it is unpickled; a file that fails raises
    ``learning.core.artifacts.ArtifactRejected``); None when the project has no model, or its file is gone."""
    version = current_model(project)
    if version is None or not model_store.exists(version.artifact):
        return None
    return version, load_model(version.artifact, project_id=project.pk)


def current_deid_model(project: Project) -> DeidModel | None:
    """The project's newest finished de-identification model (None before the first)."""
    return (DeidModel.objects.filter(project=project, status=DeidModel.Status.DONE).exclude(artifact="")
            .order_by("-created_at", "-pk").first())


def current_deid_tagger(project: Project) -> tuple[DeidModel, Any] | None:
    """As :func:`current_tagger`, for the project's de-identification model."""
    model = current_deid_model(project)
    if model is None or not model_store.exists(model.artifact):
        return None
    return model, load_model(model.artifact, project_id=project.pk)


def deid_model_state(project: Project) -> dict[str, Any]:
    """For the settings page: the de-identification model in use (``deid_model``) and the newest one asked for,
    when it is not that one (``deid_model_latest``: queued, training or failed)."""
    current = current_deid_model(project)
    latest = DeidModel.objects.filter(project=project).order_by("-created_at", "-pk").first()
    return {"deid_model": current, "deid_model_latest": latest if latest != current else None,
            "deid_model_leaks": leaks_by_type(current) if current is not None else None}


def leaks_by_type(model: ModelVersion | DeidModel) -> list[dict[str, Any]] | None:
    """The PHI types of which the model leaves evaluation tokens as non-PHI (``label``, ``leaked``, ``gold``),
    the largest share first: with a recall bias, what its suggestions and concealment leave (cross-fitted),
    else what its own decoding leaves; None for a model evaluated before these were counted."""
    bias_metrics = ((model.choices or {}).get("recall_bias") or {}).get("metrics")
    counted = (bias_metrics or model.metrics or {}).get("leaked_by_type")
    if counted is None:
        return None
    rows = [{"label": label, **counts} for label, counts in counted.items() if counts["leaked"]]
    return sorted(rows, key=lambda row: (-row["leaked"] / row["gold"], row["label"]))


def deid_model_summary(model: DeidModel | None) -> dict | None:
    """A de-identification model as the API shows it."""
    if model is None:
        return None
    return {"id": model.pk, "status": model.status, "tagger": model.tagger_kind, "created_at": model.created_at,
            "finished_at": model.finished_at, "documents": model.n_documents, "train_seconds": model.train_seconds,
            "metrics": model.metrics, "choices": model.choices, "error": model.error}


def recall_bias_of(version: ModelVersion | DeidModel) -> dict | None:
    """The recall bias the version was published with, as stored: its "beta" and either one pair ("tau_main",
    "tau_alt") or a pair per type ("thresholds", with the β of each type in "betas"); None without one."""
    bias = (version.choices or {}).get("recall_bias") or {}
    if stored_thresholds(bias) is None:
        return None
    keys = ("beta", "betas", "thresholds") if "thresholds" in bias else ("beta", "tau_main", "tau_alt")
    return {key: bias.get(key) for key in keys}
