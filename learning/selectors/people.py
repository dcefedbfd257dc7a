"""Reads behind the "People and costs" page: what annotators did and what a record really costs.

Every record submitted here is logged with the annotator's active seconds, its token count and the
corrections made against the model's suggestions (``annotator.selectors.cost_records``).  This module sums
them per annotator and overall, and puts the measured-cost fit of ``learning.selectors.measured_costs`` next to them, turned
into money at an hourly rate the lead enters.  The release planner takes its cost per annotated document
from :func:`record_cost`.

Decisions:

- **Active time only.** Rates are per *active* hour (the workbench stops the clock when the annotator is
  idle), so they overstate what a paid hour yields; the hourly rate a lead enters should be grossed up
  for breaks accordingly.
- **The average record** is the mean tokens, missed PHI added and wrong suggestions removed over every
  record of the project.  Each annotator's fit is read at that same record, so annotators are compared on
  equal work, not on the records they happened to get.
- **Uncertainty of the cost of a record** is the standard error of the mean measured active time (a
  direct measurement, free of the fit's assumptions); the fit's own uncertainty is shown as the standard
  errors of its coefficients and its R².
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from annotator.models import Project
from annotator.selectors import adjudicated_with_submissions, cost_records
from corpus.types import Document
from learning.core.costs import MIN_RECORDS, CostFit
from learning.core.metrics import entity_level
from learning.selectors.measured_costs import fits_of

__all__ = ["DEFAULT_HOURLY_RATE", "HOURLY_RATE_HELP", "AverageRecord", "PeopleRow", "RecordCost", "annotator_quality",
           "people_summary", "record_cost"]

#: What an hour of active annotation costs when the lead has not said otherwise (money units per hour).
DEFAULT_HOURLY_RATE = 40.0
HOURLY_RATE_HELP = (
    "What one hour of an annotator's active time costs, in the budget's money units; 40 by default, an assumed "
    "rate for a trained clinical annotator with overheads. Enter your own: only active time is measured, so "
    "gross a wage up for breaks."
)


@dataclass(frozen=True)
class AverageRecord:
    """The project's average record: mean tokens and corrections over every timed record."""

    tokens: float
    fn_fixes: float
    fp_fixes: float
    relabels: float
    seconds: float
    seconds_se: float | None  # standard error of the mean active seconds; None for a single record


@dataclass(frozen=True)
class PeopleRow:
    """One annotator, or everyone ("overall"): what they did per record and what the fit says it costs."""

    name: str
    records: int
    active_hours: float
    records_per_hour: float | None
    minutes_per_record: float
    median_minutes_per_record: float
    tokens_per_record: float
    fn_fixes_per_record: float
    fp_fixes_per_record: float
    relabels_per_record: float
    boundary_changes_per_record: float
    fit: CostFit | None
    average_record_seconds: float | None  # this fit read at the project's average record
    average_record_cost: float | None  # the same in money at the hourly rate

    @property
    def fit_missing_records(self) -> int:
        """Timed records still needed before a fit of one's own."""
        return max(MIN_RECORDS - self.records, 0)


@dataclass(frozen=True)
class RecordCost:
    """What annotating one average record costs: the fit's time for it, in money at ``hourly_rate``."""

    seconds: float
    seconds_se: float | None
    hourly_rate: float
    n_records: int
    average: AverageRecord

    @property
    def money(self) -> float:
        return self.seconds / 3600.0 * self.hourly_rate

    @property
    def money_se(self) -> float | None:
        return None if self.seconds_se is None else self.seconds_se / 3600.0 * self.hourly_rate


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _average_record(rows: list[dict]) -> AverageRecord | None:
    if not rows:
        return None
    seconds = [float(row["active_seconds"]) for row in rows]
    return AverageRecord(
        tokens=_mean([row["document__n_tokens"] for row in rows]),
        fn_fixes=_mean([row["fn_fixes"] for row in rows]),
        fp_fixes=_mean([row["fp_fixes"] for row in rows]),
        relabels=_mean([row["relabels"] for row in rows]),
        seconds=_mean(seconds),
        seconds_se=statistics.stdev(seconds) / math.sqrt(len(seconds)) if len(seconds) > 1 else None,
    )


def _row(name: str, rows: list[dict], fit: CostFit | None, average: AverageRecord, hourly_rate: float) -> PeopleRow:
    seconds = [float(row["active_seconds"]) for row in rows]
    hours = sum(seconds) / 3600.0
    predicted = fit.predict(average.tokens, average.fn_fixes, average.fp_fixes) if fit is not None else None
    return PeopleRow(
        name=name,
        records=len(rows),
        active_hours=hours,
        records_per_hour=len(rows) / hours if hours > 0 else None,
        minutes_per_record=_mean(seconds) / 60.0,
        median_minutes_per_record=statistics.median(seconds) / 60.0,
        tokens_per_record=_mean([row["document__n_tokens"] for row in rows]),
        fn_fixes_per_record=_mean([row["fn_fixes"] for row in rows]),
        fp_fixes_per_record=_mean([row["fp_fixes"] for row in rows]),
        relabels_per_record=_mean([row["relabels"] for row in rows]),
        boundary_changes_per_record=_mean([row["boundary_changes"] for row in rows]),
        fit=fit,
        average_record_seconds=predicted,
        average_record_cost=None if predicted is None else predicted / 3600.0 * hourly_rate,
    )


def people_summary(*, project: Project, hourly_rate: float = DEFAULT_HOURLY_RATE) -> dict:
    """Per-annotator rows, the overall row, the average record and the raw records for a chart.

    ``{"annotators": [PeopleRow], "overall": PeopleRow | None, "average": AverageRecord | None,
    "cost": RecordCost | None, "records": [{"annotator", "tokens", "fn_fixes", "fp_fixes", "relabels",
    "seconds"}], "hourly_rate": float, "min_records": int}``; ``overall`` and ``average`` are None
    before the first timed record.
    """
    rows = cost_records(project=project)
    fits = fits_of(rows)
    average = _average_record(rows)
    by_annotator: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_annotator[row["annotator__username"]].append(row)
    annotators = [
        _row(name, own, fits["annotators"].get(name), average, hourly_rate)
        for name, own in sorted(by_annotator.items())
    ] if average is not None else []
    overall = _row("All annotators", rows, fits["overall"], average, hourly_rate) if average is not None else None
    return {
        "annotators": annotators,
        "overall": overall,
        "average": average,
        "cost": _record_cost(fits["overall"], average, hourly_rate),
        "records": [
            {"annotator": row["annotator__username"], "tokens": row["document__n_tokens"], "fn_fixes": row["fn_fixes"],
             "fp_fixes": row["fp_fixes"], "relabels": row["relabels"], "seconds": float(row["active_seconds"])}
            for row in rows
        ],
        "hourly_rate": hourly_rate,
        "min_records": MIN_RECORDS,
    }


def _record_cost(fit: CostFit | None, average: AverageRecord | None, hourly_rate: float) -> RecordCost | None:
    if fit is None or average is None:
        return None
    return RecordCost(
        seconds=fit.predict(average.tokens, average.fn_fixes, average.fp_fixes),
        seconds_se=average.seconds_se,
        hourly_rate=hourly_rate,
        n_records=fit.n_records,
        average=average,
    )


def record_cost(*, project: Project, hourly_rate: float = DEFAULT_HOURLY_RATE) -> RecordCost | None:
    """The measured cost of annotating one average record of the project; None until the costs can be fitted."""
    if not (math.isfinite(hourly_rate) and hourly_rate >= 0):
        raise ValueError(f"the hourly rate must be a finite amount ≥ 0, got {hourly_rate!r}")
    rows = cost_records(project=project)
    return _record_cost(fits_of(rows)["overall"], _average_record(rows), hourly_rate)


def annotator_quality(*, project: Project) -> dict:
    """Each annotator's entity precision, recall and F1 (exact span and label) against the adjudicated gold of
    the records they submitted — overall, per label and per week of their submissions.

    Records adjudicated automatically count too (every annotator matched the gold there), so a figure reads
    "how far this person's records matched the final gold"; records without adjudicated gold (one annotator,
    or awaiting adjudication) do not count. Returns ``{"annotators": [{"name", "records", "p", "r", "f1",
    "per_label": {label: {p, r, f1, support}}}], "weeks": [{"week", "annotator", "records", "f1"}]}``.
    """
    by_annotator: dict[str, list[tuple]] = defaultdict(list)
    for record in adjudicated_with_submissions(project=project):
        for name, submitted_at, spans in record["submissions"]:
            by_annotator[name].append((submitted_at, record["gold"], spans))
    annotators, weeks = [], []
    for name in sorted(by_annotator):
        rows = by_annotator[name]
        scores = entity_level([Document("", gold) for _, gold, _ in rows], [spans for _, _, spans in rows])
        annotators.append({"name": name, "records": len(rows), **scores["entity"], "per_label": scores["per_type"]})
        per_week: dict[str, list[tuple]] = defaultdict(list)
        for submitted_at, gold, spans in rows:
            if submitted_at is not None:
                monday = submitted_at.date().toordinal() - submitted_at.weekday()
                per_week[date.fromordinal(monday).isoformat()].append((gold, spans))
        for week in sorted(per_week):
            pairs = per_week[week]
            f1 = entity_level([Document("", gold) for gold, _ in pairs], [spans for _, spans in pairs])["entity"]["f1"]
            weeks.append({"week": week, "annotator": name, "records": len(pairs), "f1": f1})
    return {"annotators": annotators, "weeks": weeks}
