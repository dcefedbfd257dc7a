"""Reads of the learning dashboard (ALGORITHMS.md §1, §5): the project's learning curve from its model
versions, the curves of its simulations to overlay on it, the documents each strategy needed to reach a
target F1, and McNemar's test of the current model against the previous one, read out in plain words.

Everything here is plain data (numbers, strings, lists, dicts) so that a template can show it and the
page can hand it to its charts as JSON unchanged.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Document, Project
from annotator.selectors import gold_document_ids
from learning.core.simulation import DOCS_TO_TARGETS, docs_to
from learning.models import ModelVersion, SimulationRun

#: The significance level the dashboard reads McNemar's p-value against.
ALPHA = 0.05

#: Learning-curve metrics: (key, label, section of the evaluation, score). Leakage has no section.
METRICS: tuple[tuple[str, str, str, str | None], ...] = (
    ("entity_f1", _("Entity F1"), "entity", "f1"),
    ("entity_p", _("Entity precision"), "entity", "p"),
    ("entity_r", _("Entity recall"), "entity", "r"),
    ("token_f1", _("Token F1 (PHI vs not)"), "token", "f1"),
    ("token_p", _("Token precision (PHI vs not)"), "token", "p"),
    ("token_r", _("Token recall (PHI vs not)"), "token", "r"),
    ("leakage", _("Leakage"), "leakage", None),
)
#: The metrics the evaluation also reports per PHI type (entity level).
PER_TYPE_METRICS = {"entity_f1": "f1", "entity_p": "p", "entity_r": "r"}
#: Which mean curve of a simulation stands for a metric (simulations measure entity scores only).
SIMULATION_SERIES = {"entity_f1": "f1_mean", "entity_p": "precision_mean", "entity_r": "recall_mean"}
X_AXES: tuple[tuple[str, str], ...] = (
    ("n_documents", _("Training documents")),
    ("n_tokens", _("Training tokens")),
    ("annotator_hours", _("Annotator-hours")),
)
#: Simulations shown on the dashboard (the newest first).
RECENT_SIMULATIONS = 8


# --------------------------------------------------------------------------------------------------
# The live learning curve


def metric_value(metrics: dict, key: str) -> float | None:
    """One learning-curve metric of an evaluation result (None when the model was not evaluated)."""
    for name, _label, section, score in METRICS:
        if name == key:
            if section == "leakage":
                value = metrics.get("leakage")
            else:
                value = (metrics.get(section) or {}).get(score)
            return None if value is None else float(value)
    raise KeyError(f"unknown metric {key!r}")


def curve_versions(*, project: Project) -> list[ModelVersion]:
    """The project's trained models, oldest first: one learning-curve point each."""
    return list(ModelVersion.objects.filter(project=project, status=ModelVersion.Status.READY).order_by(
        "created_at", "pk"))


def curve_point(version: ModelVersion) -> dict[str, Any]:
    metrics = version.metrics or {}
    strategy = (version.choices or {}).get("strategy") or {}
    return {
        "id": version.pk,
        "url": reverse("learning:model-version", args=[version.project_id, version.pk]),
        "created_at": version.created_at.isoformat(),
        "is_current": version.is_current,
        "n_documents": version.n_documents,
        "n_tokens": version.n_tokens,
        "annotator_hours": version.annotator_hours,
        "gold_documents": len(version.gold_document_ids or []),
        "silver_sentences": version.silver_sentences,
        "strategy": strategy.get("name", ""),
        "train_seconds": version.train_seconds,
        "values": {key: metric_value(metrics, key) for key, *_ in METRICS},
        "per_type": {
            label: {k: scores.get(k) for k in ("p", "r", "f1", "support")}
            for label, scores in (metrics.get("per_type") or {}).items()
        },
    }


def learning_curve(*, project: Project, versions: Sequence[ModelVersion] | None = None) -> list[dict[str, Any]]:
    """One point per model version, oldest first, with every metric overall and per PHI type."""
    return [curve_point(v) for v in (curve_versions(project=project) if versions is None else versions)]


def phi_types(*, project: Project, points: Iterable[dict], simulations: Iterable[dict] = ()) -> list[str]:
    """The PHI types the curves have scores for, in the project's label order (unknown ones after)."""
    seen = {label for point in points for label in point["per_type"]}
    for run in simulations:
        for batch in run["batches"]:
            for strategy in batch["strategies"]:
                seen.update(strategy["per_type_f1"])
    ordered = [label for label in project.labels if label in seen]
    return ordered + sorted(seen - set(ordered))


def live_docs_to(points: Sequence[dict]) -> dict[str, int | None]:
    """Documents the project's own models needed to reach each target entity F1 (None: not yet)."""
    measured = [(p["n_documents"], p["values"]["entity_f1"]) for p in points if p["values"]["entity_f1"] is not None]
    return {f"{t:g}": docs_to([d for d, _ in measured], [f for _, f in measured], t) for t in DOCS_TO_TARGETS}


# --------------------------------------------------------------------------------------------------
# McNemar's test between the current model and the previous one


def _p_text(pvalue: float) -> str:
    return "p < 0.0001" if pvalue < 0.0001 else f"p = {pvalue:.4f}"


def mcnemar_reading(version: ModelVersion) -> dict[str, Any] | None:
    """McNemar's test of ``version`` against the model it replaced, with a sentence a lead can act on.

    ``a_only`` counts the evaluation tokens only the new model gets right, ``b_only`` those only the
    previous one gets right; the sign of their difference says which way a significant result goes.
    """
    test = (version.metrics or {}).get("mcnemar_vs_previous")
    if not test:
        return None
    pvalue = float(test["pvalue"])
    new_only, old_only = int(test["a_only"]), int(test["b_only"])
    previous = test.get("previous")
    previous_exists = bool(previous) and ModelVersion.objects.filter(pk=previous, project_id=version.project_id).exists()
    if pvalue < ALPHA and new_only != old_only:
        verdict = "better" if new_only > old_only else "worse"
        headline = (gettext("the new model is significantly better than the previous one at p < %(alpha)s")
                    if verdict == "better" else
                    gettext("the new model is significantly worse than the previous one at p < %(alpha)s")
                    ) % {"alpha": f"{ALPHA:g}"}
    else:
        verdict = "indistinguishable"
        headline = gettext("the new model is not distinguishable from the previous one at p < %(alpha)s") % {
            "alpha": f"{ALPHA:g}"}
    text = gettext("Model #%(version)s against model #%(previous)s: %(headline)s (%(p)s, χ² = %(statistic)s). "
                   "%(new_only)s evaluation tokens are right only with the new model, %(old_only)s only with the "
                   "previous one.") % {
        "version": version.pk, "previous": previous, "headline": headline, "p": _p_text(pvalue),
        "statistic": f"{float(test['statistic']):.2f}", "new_only": new_only, "old_only": old_only}
    return {
        "version": version.pk,
        "previous": previous,
        "previous_url": reverse("learning:model-version", args=[version.project_id, previous]) if previous_exists else None,
        "verdict": verdict,
        "significant": verdict != "indistinguishable",
        "headline": headline,
        "text": text,
        "p_text": _p_text(pvalue),
        "pvalue": pvalue,
        "statistic": float(test["statistic"]),
        "new_only": new_only,
        "previous_only": old_only,
        "both": int(test["both"]),
        "neither": int(test["neither"]),
    }


# --------------------------------------------------------------------------------------------------
# Simulations


def simulation_progress(run: SimulationRun) -> dict[str, Any]:
    """How far a simulation is: models trained of all, as a percentage, with the worker's last message."""
    progress = run.progress or {}
    done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
    if run.status == SimulationRun.Status.DONE:
        percent = 100
    elif total:
        percent = round(100 * done / total)
    else:
        percent = 0
    return {"done": done, "total": total, "percent": percent, "text": progress.get("text", ""),
            "active": run.status in (SimulationRun.Status.QUEUED, SimulationRun.Status.RUNNING)}


def _batches(run: SimulationRun) -> list[int]:
    return sorted(int(b) for b in (run.results or {}))


def _strategy_curves(run: SimulationRun, batch: int) -> list[tuple[str, dict]]:
    """(name, curve) of every strategy of one batch size, in the order they were asked for (the stored
    JSON does not keep the order of its keys)."""
    curves = run.results[str(batch)]["strategies"]
    names = [name for name in run.strategies if name in curves]
    names += sorted(set(curves) - set(names))
    return [(name, curves[name]) for name in names]


def simulation_overlay(run: SimulationRun) -> dict[str, Any]:
    """A finished simulation's mean curves (and F1's spread) per batch size, keyed like the live curve."""
    batches = []
    for batch in _batches(run):
        result = run.results[str(batch)]
        strategies = []
        for name, curve in _strategy_curves(run, batch):
            strategies.append({
                "name": name,
                "docs": curve["docs"],
                "values": {key: curve[series] for key, series in SIMULATION_SERIES.items()},
                "sd": {"entity_f1": curve["f1_sd"]},
                "per_type_f1": curve.get("per_type_f1", {}),
            })
        runs = result.get("config", {}).get("runs", run.runs)
        batches.append({
            "key": f"{run.pk}:{batch}",
            "batch": batch,
            "label": f"#{run.pk} · batch {batch} · {runs} run{'s' if runs != 1 else ''}",
            "strategies": strategies,
        })
    return {"id": run.pk, "batches": batches}


def docs_to_rows(run: SimulationRun) -> list[dict[str, Any]]:
    """One row per batch size × strategy: documents to reach each target F1 (``best`` marks the fewest
    within the batch size), the area under the curve, and the final F1 with its spread."""
    rows = []
    for batch in _batches(run):
        batch_rows = []
        for name, curve in _strategy_curves(run, batch):
            batch_rows.append({
                "batch": batch,
                "strategy": name,
                "docs_to": [curve["docs_to"].get(f"{t:g}") for t in DOCS_TO_TARGETS],
                "aulc": curve["aulc"],
                "aulc_vs_random": curve.get("aulc_vs_random"),
                "final_docs": curve["final"]["docs"],
                "final_f1": curve["final"]["f1"],
                "final_sd": curve["f1_sd"][-1] if curve.get("f1_sd") else 0.0,
            })
        for i in range(len(DOCS_TO_TARGETS)):
            reached = [row["docs_to"][i] for row in batch_rows if row["docs_to"][i] is not None]
            fewest = min(reached) if reached else None
            for row in batch_rows:
                row.setdefault("cells", []).append({"docs": row["docs_to"][i],
                                                    "best": fewest is not None and row["docs_to"][i] == fewest})
        rows.extend(batch_rows)
    return rows


def trained_models(run: SimulationRun) -> int:
    """Models a finished simulation trained and measured: one per point of every run's curve."""
    return sum(len(curve["docs"]) * int(result.get("config", {}).get("runs", run.runs))
               for result in (run.results or {}).values() for curve in result["strategies"].values())


def simulation_summary(run: SimulationRun) -> dict[str, Any]:
    """What the dashboard shows of one simulation: its request, progress and (when done) its results."""
    return {
        "models": trained_models(run),
        "run": run,
        "progress": simulation_progress(run),
        "rows": docs_to_rows(run) if run.status == SimulationRun.Status.DONE else [],
        "overlay": simulation_overlay(run) if run.status == SimulationRun.Status.DONE else None,
        "targets": [f"{t:g}" for t in DOCS_TO_TARGETS],
        "live_docs_to": list(live_docs_to(learning_curve(project=run.project)).values()),
        "seconds": ((run.finished_at - run.started_at).total_seconds()
                    if run.finished_at and run.started_at else None),
    }


def project_simulation(*, project: Project, run_id: int) -> SimulationRun:
    """One of the project's simulations (404 for another project's)."""
    return get_object_or_404(SimulationRun.objects.select_related("requested_by"), project=project, pk=run_id)


def recent_simulations(*, project: Project) -> list[SimulationRun]:
    return list(SimulationRun.objects.filter(project=project).select_related("requested_by")
                .order_by("-created_at", "-pk")[:RECENT_SIMULATIONS])


def annotated_pool_documents(*, project: Project) -> int:
    """Pool documents with submitted gold: the documents a simulation can replay."""
    return len(gold_document_ids(project=project, role=Document.Role.POOL))


# --------------------------------------------------------------------------------------------------
# Pages


def _default_overlay(shown: SimulationRun | None, done: list[SimulationRun]) -> str:
    """The curves drawn over the live one at first: the shown simulation's when it has finished, else the
    newest finished one's (its smallest batch size); "" when there is none."""
    for run in ([shown] if shown is not None else []) + done:
        if run.status == SimulationRun.Status.DONE and _batches(run):
            return f"{run.pk}:{_batches(run)[0]}"
    return ""


def dashboard_state(*, project: Project, simulation_id: int | None = None) -> dict[str, Any]:
    """Everything the dashboard page shows; ``chart_data`` goes to its charts as JSON."""
    versions = curve_versions(project=project)
    points = learning_curve(project=project, versions=versions)
    current = next((v for v in versions if v.is_current), versions[-1] if versions else None)
    simulations = recent_simulations(project=project)
    done = [run for run in simulations if run.status == SimulationRun.Status.DONE]
    overlays = [simulation_overlay(run) for run in done]
    if simulation_id is not None:
        shown = project_simulation(project=project, run_id=simulation_id)
    else:
        shown = simulations[0] if simulations else None
    if shown is not None and shown.status == SimulationRun.Status.DONE and all(o["id"] != shown.pk for o in overlays):
        overlays.append(simulation_overlay(shown))
    current_point = next((p for p in points if current and p["id"] == current.pk), None)
    current_leakage = current_point["values"]["leakage"] if current_point else None
    chart_data = {
        "project": {"id": project.pk, "name": project.name},
        "points": points,
        "metrics": [{"key": key, "label": str(label), "per_type": key in PER_TYPE_METRICS}
                    for key, label, *_ in METRICS],
        "x_axes": [{"key": key, "label": str(label)} for key, label in X_AXES],
        "types": phi_types(project=project, points=points, simulations=overlays),
        "simulations": overlays,
        "overlay": _default_overlay(shown, done),
        "current": current.pk if current else None,
    }
    return {
        "versions": list(reversed(versions)),
        "current": current,
        "current_point": current_point,
        "leakage_percent": None if current_leakage is None else 100 * current_leakage,
        "mcnemar": mcnemar_reading(current) if current else None,
        "targets": [f"{t:g}" for t in DOCS_TO_TARGETS],
        "simulations": simulations,
        "shown": simulation_summary(shown) if shown is not None else None,
        "annotated_pool": annotated_pool_documents(project=project),
        "chart_data": chart_data,
    }


def per_type_rows(*, project: Project, metrics: dict, bias: dict | None = None) -> list[dict[str, Any]]:
    """The per-type scores of an evaluation in the project's label order; with ``bias`` (the recall bias a
    version was published with), each row's ``biased`` precision and recall (the cross-fitted scores of the
    suggestions) and, with a pair per type, the row's ``thresholds`` (its β and pair; None: not biased).
    ``leaked`` and ``biased_leaked``: the type's gold tokens and those shown as non-PHI, without and with the
    bias (None for a version evaluated before they were counted)."""
    per_type = metrics.get("per_type") or {}
    biased_metrics = (bias or {}).get("metrics") or {}
    biased_per_type = biased_metrics.get("per_type") or {}
    leaked, biased_leaked = metrics.get("leaked_by_type") or {}, biased_metrics.get("leaked_by_type") or {}
    pairs, betas = (bias or {}).get("thresholds") or {}, (bias or {}).get("betas") or {}
    order = [label for label in project.labels if label in per_type]
    order += sorted(set(per_type) - set(order))
    return [{"label": label, **per_type[label], "biased": biased_per_type.get(label),
             "leaked": leaked.get(label), "biased_leaked": biased_leaked.get(label),
             "thresholds": {"beta": betas.get(label), "tau_main": pairs[label][0], "tau_alt": pairs[label][1]}
             if label in pairs else None}
            for label in order]


def metric_rows(metrics: dict) -> list[dict[str, Any]]:
    """Precision, recall and F1 of every level the evaluation reports."""
    levels = (("entity", gettext("Entity (exact span and type)")),
              ("entity_binary", gettext("Entity (exact span, type ignored)")),
              ("token", gettext("Token (PHI vs not)")), ("token_type", gettext("Token (same type)")))
    return [{"key": key, "label": label, **metrics[key]} for key, label in levels if key in metrics]


def model_version_state(*, project: Project, version_id: int) -> dict[str, Any]:
    """One learning-curve point: its scores, training set, choices and timings, and its neighbours."""
    version = get_object_or_404(ModelVersion, project=project, pk=version_id)
    versions = curve_versions(project=project)
    ids = [v.pk for v in versions]
    index = ids.index(version.pk) if version.pk in ids else None
    previous = versions[index - 1] if index else None
    following = versions[index + 1] if index is not None and index + 1 < len(versions) else None
    names = list(version.gold_document_ids or [])
    documents = dict(Document.objects.filter(project=project, external_id__in=names).values_list("external_id", "pk"))
    metrics = version.metrics or {}
    bias = (version.choices or {}).get("recall_bias") or {}
    biased = bias.get("metrics") or {}
    return {
        "version": version,
        "position": None if index is None else index + 1,
        "count": len(versions),
        "previous": previous,
        "following": following,
        "metric_rows": metric_rows(metrics),
        "leakage": metrics.get("leakage"),
        "counts": metrics.get("counts") or {},
        "eval_tokens": metrics.get("eval_tokens"),
        "per_type": per_type_rows(project=project, metrics=metrics, bias=bias),
        "per_type_biased": bool(biased.get("per_type")),
        "per_type_thresholds": bool(bias.get("thresholds")),
        "mcnemar": mcnemar_reading(version),
        "gold_documents": [{"name": name, "id": documents.get(name)} for name in names],
        "strategy": (version.choices or {}).get("strategy") or {},
        "recall_bias": bias,
        "self_training": (version.choices or {}).get("self_training") or {},
        "seed": (version.choices or {}).get("seed"),
        "total_seconds": (version.train_seconds or 0) + (version.scoring_seconds or 0),
    }
