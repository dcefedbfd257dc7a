"""The release planner of a project: its measured learning curve and costs fed into the game of
``deid.core.release_planner`` (ALGORITHMS.md §7).

- P_p(α), R_p(α): entity-level precision and recall of every evaluated model version of the project,
  against the number of documents it was trained on, fitted by ``fit_learning_curve`` (and extrapolated
  with its band). The attacker learns along the same curves (the module's default).
- i (PHI per document): the mean number of gold spans per annotated document, evaluation set included.
- c_p: the fitted active time of the project's average record (``learning.selectors.people.record_cost``) at the
  hourly rate the lead enters; until the costs can be fitted, the module's default.
- The α grid starts at the pool documents already annotated and, by default, stops at the pool
  documents there are (one cannot annotate documents one does not have); β defaults to every document
  of the project.

Everything a lead can get wrong here raises :class:`PlannerError` with a message meant for them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Document, Project
from annotator.selectors import gold_document_ids, gold_documents, project_overview
from deid.core.release_planner import (
    PUBLISHER_DEFAULTS,
    AttackerParameters,
    LearningCurve,
    Policy,
    PublisherParameters,
    ReleasePlan,
    fit_learning_curve,
    plan,
)
from learning.selectors.dashboard import curve_versions
from learning.selectors.people import DEFAULT_HOURLY_RATE, RecordCost, record_cost

__all__ = ["MIN_CURVE_POINTS", "POLICY_NAMES", "MeasuredPoint", "PlannerError", "PlannerInputs", "PlannerResult",
           "PlannerSettings", "planner_inputs", "release_plan"]

#: Distinct training-set sizes needed before the curve is fitted (a power law has three parameters).
MIN_CURVE_POINTS = 3
#: The largest α considered when only the budget limits it (a tiny c_p must not make the grid overflow).
MAX_ALPHA = 10_000_000

POLICY_NAMES: dict[str, str] = {
    Policy.TRADITIONAL.value: _("Traditional"),
    Policy.SAFE_FORWARD.value: _("Safe-forward"),
    Policy.ATTACK_FORWARD.value: _("Attack-forward"),
    Policy.ATTACK_BACK.value: _("Attack-back"),
}

_CURVE_CHART_POINTS = 160


class PlannerError(ValueError):
    """A plan that cannot be made with the parameters given; the message says what to change."""


@dataclass(frozen=True)
class MeasuredPoint:
    """One evaluated model version: trained on ``documents``, entity-level precision and recall."""

    documents: int
    precision: float
    recall: float
    version_id: int


@dataclass(frozen=True)
class PlannerInputs:
    """What the project has measured, before the lead's parameters."""

    points: list[MeasuredPoint]
    annotated_documents: int  # pool documents with submitted gold: α today
    pool_documents: int  # pool documents in all: the most that can be annotated
    project_documents: int  # every document: the default release β
    gold_documents: int  # documents whose gold gives i
    phi_per_document: float | None
    cost: RecordCost | None

    @property
    def curve_sizes(self) -> int:
        return len({point.documents for point in self.points})

    @property
    def can_fit(self) -> bool:
        return self.curve_sizes >= MIN_CURVE_POINTS


@dataclass(frozen=True)
class PlannerSettings:
    """The lead's parameters. None for ``cost_per_document``/``phi_per_document`` means "the measured
    value"; None for ``max_documents`` means "as many as the budget pays for"."""

    publisher_budget: float = PUBLISHER_DEFAULTS["budget"].value
    hourly_rate: float = DEFAULT_HOURLY_RATE
    cost_per_document: float | None = None
    over_redaction_cost: float = PUBLISHER_DEFAULTS["fine_per_false_claim"].value
    documents_shared: int = 1
    max_documents: int | None = None
    phi_per_document: float | None = None
    attacker: AttackerParameters = field(default_factory=AttackerParameters)


@dataclass(frozen=True)
class PlannerResult:
    plan: ReleasePlan
    precision_curve: LearningCurve
    recall_curve: LearningCurve
    publisher: PublisherParameters
    attacker: AttackerParameters
    cost_per_document: float
    cost_source: str  # "measured", "entered" or "default"
    cost_se: float | None  # standard error of a measured cost, in money
    phi_per_document: float
    phi_source: str  # "measured" or "entered"
    documents_shared: int
    max_documents: int | None
    annotated_documents: int
    policies: list[dict[str, Any]]
    verdict: dict[str, Any]  # {"share": bool, "title": str}: the recommendation in a few words
    when_not_to_share: list[str]
    chart: dict[str, Any]


def _measured_points(project: Project) -> list[MeasuredPoint]:
    points = []
    for version in curve_versions(project=project):
        if version.n_documents <= 0:
            continue
        entity = (version.metrics or {}).get("entity") or {}
        precision, recall = entity.get("p"), entity.get("r")
        if precision is None or recall is None:
            continue  # trained without an evaluation set: no point on the curve
        points.append(MeasuredPoint(version.n_documents, float(precision), float(recall), version.pk))
    return points


def planner_inputs(*, project: Project) -> PlannerInputs:
    """The project's measured curve, counts, PHI per document and the time an average record takes."""
    gold = gold_documents(project=project)
    overview = project_overview(project=project)
    annotated = len(gold_document_ids(project=project, role=Document.Role.POOL))
    return PlannerInputs(
        points=_measured_points(project),
        annotated_documents=annotated,
        pool_documents=overview["pool_total"],
        project_documents=overview["documents"],
        gold_documents=len(gold),
        phi_per_document=sum(len(document.spans) for document in gold) / len(gold) if gold else None,
        cost=record_cost(project=project),
    )


def release_plan(*, inputs: PlannerInputs, settings: PlannerSettings) -> PlannerResult:
    """Fit the curves and play the game with the lead's parameters; PlannerError if it cannot be played."""
    if not inputs.can_fit:
        raise PlannerError(
            f"The learning curve needs evaluated models trained on at least {MIN_CURVE_POINTS} different numbers "
            f"of documents; this project has {inputs.curve_sizes}."
        )
    if settings.cost_per_document is not None:
        cost, cost_source, cost_se = settings.cost_per_document, "entered", None
    elif inputs.cost is not None:
        cost, cost_source = settings.hourly_rate * inputs.cost.seconds / 3600.0, "measured"
        cost_se = None if inputs.cost.seconds_se is None else settings.hourly_rate * inputs.cost.seconds_se / 3600.0
    else:
        cost, cost_source, cost_se = PUBLISHER_DEFAULTS["cost_per_document"].value, "default", None
    if settings.phi_per_document is not None:
        phi, phi_source = settings.phi_per_document, "entered"
    elif inputs.phi_per_document is not None:
        phi, phi_source = inputs.phi_per_document, "measured"
    else:
        raise PlannerError("No gold annotations to count PHI per document from: enter PHI per document.")
    if settings.max_documents is not None and settings.max_documents < inputs.annotated_documents:
        raise PlannerError(
            f"Documents available to annotate ({settings.max_documents}) cannot be fewer than the "
            f"{inputs.annotated_documents} already annotated."
        )
    if cost == 0 and settings.max_documents is None:
        raise PlannerError(
            "Annotation costs nothing at this rate, so the budget sets no limit: enter how many documents are "
            "available to annotate."
        )

    max_documents = settings.max_documents
    if max_documents is None and settings.publisher_budget > cost * MAX_ALPHA:
        max_documents = MAX_ALPHA

    points = inputs.points
    sizes = [point.documents for point in points]
    try:
        precision_curve = fit_learning_curve(sizes, [point.precision for point in points])
        recall_curve = fit_learning_curve(sizes, [point.recall for point in points])
        publisher = PublisherParameters(
            budget=settings.publisher_budget, cost_per_document=cost,
            fine_per_false_claim=settings.over_redaction_cost,
        )
        result = plan(
            precision_curve=precision_curve,
            recall_curve=recall_curve,
            annotated_documents=inputs.annotated_documents,
            phi_per_document=phi,
            documents_shared=settings.documents_shared,
            publisher=publisher,
            attacker=settings.attacker,
            max_documents=max_documents,
        )
    except ValueError as error:  # the module's messages are written for people; pass them on
        message = str(error)
        raise PlannerError(message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")) from error
    return PlannerResult(
        plan=result,
        precision_curve=precision_curve,
        recall_curve=recall_curve,
        publisher=publisher,
        attacker=settings.attacker,
        cost_per_document=cost,
        cost_source=cost_source,
        cost_se=cost_se,
        phi_per_document=phi,
        phi_source=phi_source,
        documents_shared=settings.documents_shared,
        max_documents=settings.max_documents,
        annotated_documents=inputs.annotated_documents,
        policies=_policy_rows(result, inputs.annotated_documents),
        verdict=_verdict(result, inputs.annotated_documents),
        when_not_to_share=_when_not_to_share(result),
        chart=_chart(result, precision_curve, recall_curve, points, inputs.annotated_documents),
    )


def _policy_rows(result: ReleasePlan, annotated: int) -> list[dict[str, Any]]:
    rows = []
    for key, outcome in result.outcomes.items():
        row: dict[str, Any] = {"key": key, "name": POLICY_NAMES[key], "description": outcome.description,
                               "best_alpha": outcome.best_alpha, "should_share": outcome.should_share,
                               "advice": outcome.advice, "payoff": outcome.best_payoff}
        if outcome.best_alpha is not None:
            k = result.alphas.index(outcome.best_alpha)
            row.update(
                more=outcome.best_alpha - annotated,
                precision=result.precision[k], precision_lower=result.precision_lower[k],
                precision_upper=result.precision_upper[k],
                recall=result.recall[k], recall_lower=result.recall_lower[k], recall_upper=result.recall_upper[k],
                attacker_payoff=outcome.attacker_payoffs[k],
                attacks=result.attacker_attacks[k] and key != Policy.SAFE_FORWARD.value,
                attacker_documents=result.attacker_documents[k],
            )
        rows.append(row)
    return rows


def _verdict(result: ReleasePlan, annotated: int) -> dict[str, Any]:
    """The recommendation's headline; like ``plan``'s advice it follows Safe-forward."""
    safe = result.outcomes[Policy.SAFE_FORWARD.value]
    if safe.best_alpha is not None and safe.should_share:
        more = safe.best_alpha - annotated
        title = gettext("Share now") if more == 0 else ngettext(
            "Share after annotating %(more)s more document", "Share after annotating %(more)s more documents", more,
        ) % {"more": more}
        return {"share": True, "title": title, "alpha": safe.best_alpha}
    return {"share": False, "title": gettext("Do not share"), "alpha": None}


def _when_not_to_share(result: ReleasePlan) -> list[str]:
    """Plain sentences on the α at which sharing invites an attack, and the policies not worth sharing under."""
    alphas, attacks = result.alphas, result.attacker_attacks
    sentences = []
    if all(attacks):
        sentences.append(gettext(
            "The attacker's best attack pays at every α from %(first)s to %(last)s annotated documents: "
            "whatever you annotate within the budget, a release invites an attack."
        ) % {"first": alphas[0], "last": alphas[-1]})
    elif not any(attacks):
        sentences.append(gettext(
            "The attacker is deterred at every α from %(first)s to %(last)s: no attack on this release "
            "pays, so the only question is whether sharing pays you."
        ) % {"first": alphas[0], "last": alphas[-1]})
    else:
        safe = [alpha for alpha, attacked in zip(alphas, attacks) if not attacked]
        if all(attacked for alpha, attacked in zip(alphas, attacks) if alpha < safe[0]) and not any(
            attacked for alpha, attacked in zip(alphas, attacks) if alpha >= safe[0]
        ):
            k = alphas.index(safe[0]) - 1
            sentences.append(gettext(
                "Do not share before %(safe)s documents are annotated: below that the attacker's best attack "
                "pays (at α = %(alpha)s it would annotate %(documents)s of the shared documents and gain %(gain)s)."
            ) % {"safe": safe[0], "alpha": alphas[k], "documents": result.attacker_documents[k],
                 "gain": f"{result.attacker_gains[k]:,.2f}"})
        else:
            attacked = ", ".join(str(alpha) for alpha, hit in zip(alphas, attacks) if hit)
            sentences.append(gettext("Do not share at these α, where the attacker's best attack pays: %(alphas)s.")
                             % {"alphas": attacked})
    for key, outcome in result.outcomes.items():
        if key == Policy.TRADITIONAL.value or outcome.should_share:
            continue
        name = POLICY_NAMES[key]
        if outcome.best_alpha is None:
            sentences.append(gettext("Under %(policy)s, never share: there is no α at which it would.") % {"policy": name})
        else:
            sentences.append(gettext(
                "Under %(policy)s, do not share: its best payoff (%(payoff)s) is not above 0, what keeping the "
                "documents is worth."
            ) % {"policy": name, "payoff": f"{outcome.best_payoff:,.2f}"})
    return sentences


def _chart(
    result: ReleasePlan,
    precision_curve: LearningCurve,
    recall_curve: LearningCurve,
    points: list[MeasuredPoint],
    annotated: int,
) -> dict[str, Any]:
    """Everything the page's charts draw, as JSON-ready lists."""
    top = max(result.alphas[-1], max(point.documents for point in points))
    # From half the first measured size: below it the curve only falls towards "no model" at α = 0.
    start = max(1, min(point.documents for point in points) // 2)
    dense = np.unique(np.round(np.linspace(start, top, _CURVE_CHART_POINTS)).astype(int))
    curves = {}
    for name, curve in (("precision", precision_curve), ("recall", recall_curve)):
        estimate = curve.predict(dense)
        curves[name] = {"value": estimate.value.tolist(), "lower": estimate.lower.tolist(),
                        "upper": estimate.upper.tolist(), "method": curve.method}
    return {
        "policies": {key: str(name) for key, name in POLICY_NAMES.items()},
        "plan": result.as_dict(),
        "curve": {"alphas": dense.tolist(), **curves, "last_measured": precision_curve.last_measured},
        "measured": [{"documents": p.documents, "precision": p.precision, "recall": p.recall, "version": p.version_id}
                     for p in points],
        "annotated": annotated,
    }
