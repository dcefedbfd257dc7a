"""Measured annotation costs of a project, and the query strategy they feed ("ROI (measured costs)")."""
from __future__ import annotations

from collections import defaultdict

from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from annotator.selectors import cost_records
from learning.core.costs import VALUE_SECONDS, CostFit, fit_costs, measured_roi_params
from learning.core.strategies import PRESETS, Strategy, get_strategy

#: The project setting that asks for ROI with the project's measured costs.
ROI_MEASURED = "ROI_measured"
#: Used while too few records have been timed to fit the costs.
ROI_FALLBACK = "ROI_2"


def strategy_choices() -> list[tuple[str, str]]:
    """(value, label) pairs for a strategy field: the presets of ALGORITHMS.md §1 and measured ROI."""
    return [(name, name) for name in PRESETS] + [(ROI_MEASURED, _("ROI (measured costs)"))]


def _fit(rows: list[dict]) -> CostFit | None:
    return fit_costs(
        [row["document__n_tokens"] for row in rows], [row["fn_fixes"] for row in rows],
        [row["fp_fixes"] for row in rows], [row["active_seconds"] for row in rows],
    )


def cost_fits(*, project: Project) -> dict:
    """``{"overall": CostFit | None, "annotators": {username: CostFit | None}, "records": n}``.

    Annotators with too few timed records get None (the overall fit stands for them).
    """
    return fits_of(cost_records(project=project))


def fits_of(rows: list[dict]) -> dict:
    """:func:`cost_fits` of records already read (``annotator.selectors.cost_records``)."""
    by_annotator: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_annotator[row["annotator__username"]].append(row)
    return {
        "overall": _fit(rows),
        "annotators": {name: _fit(own) for name, own in sorted(by_annotator.items())},
        "records": len(rows),
    }


def project_strategy(project: Project) -> tuple[Strategy, dict]:
    """The strategy the project's next ranking uses, and a note on where its parameters came from."""
    if project.strategy != ROI_MEASURED:
        return get_strategy(project.strategy, **project.strategy_params), {}
    value = float(project.strategy_params.get("value_seconds", VALUE_SECONDS))
    fit = _fit(cost_records(project=project))
    if fit is None:
        strategy = get_strategy(ROI_FALLBACK)
        return strategy, {"why": f"ROI (measured costs) asked for, but fewer records are timed than a fit needs; "
                                 f"{ROI_FALLBACK} stands in until then"}
    params = measured_roi_params(fit, value_seconds=value)
    strategy = get_strategy("roi", **params)
    return Strategy("ROI (measured costs)", "roi", strategy.params), {
        "why": f"costs fitted on {fit.n_records} timed records: {fit.seconds_per_token:.3f} s per token, "
               f"{fit.seconds_per_fn_fix:.1f} s per missed PHI added, {fit.seconds_per_fp_fix:.1f} s per wrong "
               f"suggestion removed; a correction is valued at {value:g} s",
        "value_seconds": value,
    }
