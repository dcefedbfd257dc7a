"""What a record really costs: annotation time fitted on tokens read and corrections made.

ALGORITHMS.md §1 (ROI) leaves the costs to be measured.  Every submitted record logs the annotator's active
seconds, its token count and the corrections made against the model's suggestions; this module fits

    seconds ≈ a·tokens + b·FN fixes + c·FP fixes

by non-negative least squares (a cost is never negative; ordinary least squares on a few records happily
returns one), reports standard errors from the residual variance over the coefficients left free, and turns
a fit into the parameters of the ROI strategy ("ROI (measured costs)").
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from learning.core.params import Param

__all__ = ["CostFit", "MEASURED_ROI_PARAMETERS", "MIN_RECORDS", "VALUE_SECONDS", "fit_costs", "measured_roi_params"]

#: Fewer records than this give no fit (three coefficients need a margin of residual degrees of freedom).
MIN_RECORDS = 8

#: What one corrected error is worth to the model, in seconds of annotator time.  The ROI strategy weighs
#: the chance that a token is wrong (value − correction cost) against the time it takes to read it.
VALUE_SECONDS = 30.0

#: What a lead may set for "ROI (measured costs)": the costs themselves are measured.
MEASURED_ROI_PARAMETERS = (
    Param("value_seconds", float, VALUE_SECONDS, "what one corrected error is worth, in seconds of annotator time",
          minimum=1.0, maximum=3600.0),
)

TERMS = ("tokens", "fn_fixes", "fp_fixes")


@dataclass(frozen=True)
class CostFit:
    """seconds ≈ a·tokens + b·fn_fixes + c·fp_fixes, with standard errors (None where not estimable)."""

    seconds_per_token: float
    seconds_per_fn_fix: float
    seconds_per_fp_fix: float
    se_per_token: float | None
    se_per_fn_fix: float | None
    se_per_fp_fix: float | None
    r2: float
    residual_seconds: float
    n_records: int
    total_seconds: float

    def predict(self, tokens: float, fn_fixes: float = 0.0, fp_fixes: float = 0.0) -> float:
        return (self.seconds_per_token * tokens + self.seconds_per_fn_fix * fn_fixes
                + self.seconds_per_fp_fix * fp_fixes)

    def as_dict(self) -> dict:
        return asdict(self)


def fit_costs(
    tokens: Sequence[float], fn_fixes: Sequence[float], fp_fixes: Sequence[float], seconds: Sequence[float],
    *, min_records: int = MIN_RECORDS,
) -> CostFit | None:
    """The fit over records (one entry per submitted record), or None with fewer than ``min_records``.

    Records with no active time or no tokens say nothing about cost and are left out.
    """
    import numpy as np  # here, not at the top: the web processes read this module's settings, not the fit
    from scipy.optimize import nnls

    columns = [np.asarray(values, dtype=np.float64) for values in (tokens, fn_fixes, fp_fixes, seconds)]
    if len({column.shape for column in columns}) != 1 or columns[0].ndim != 1:
        raise ValueError("tokens, fn_fixes, fp_fixes and seconds must be equally long sequences")
    x = np.column_stack(columns[:3])
    y = columns[3]
    if (x < 0).any() or (y < 0).any() or not np.isfinite(x).all() or not np.isfinite(y).all():
        raise ValueError("counts and seconds must be finite and non-negative")
    keep = (y > 0) & (x[:, 0] > 0)
    x, y = x[keep], y[keep]
    n = len(y)
    if n < max(min_records, len(TERMS) + 1):
        return None

    coefficients, _ = nnls(x, y)
    residuals = y - x @ coefficients
    free = coefficients > 0
    dof = n - int(free.sum())
    sigma2 = float(residuals @ residuals) / dof if dof > 0 else float("nan")
    errors: list[float | None] = [None] * len(TERMS)
    if free.any() and dof > 0:
        gram = x[:, free].T @ x[:, free]
        if np.linalg.matrix_rank(gram) == gram.shape[0]:
            diagonal = np.diag(np.linalg.inv(gram)) * sigma2
            for position, index in enumerate(np.flatnonzero(free)):
                errors[index] = float(np.sqrt(max(diagonal[position], 0.0)))
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(residuals @ residuals) / total if total > 0 else 0.0
    return CostFit(
        *(float(value) for value in coefficients), *errors, r2=r2,
        residual_seconds=float(np.sqrt(sigma2)) if np.isfinite(sigma2) else 0.0,
        n_records=n, total_seconds=float(y.sum()),
    )


def measured_roi_params(fit: CostFit, *, value_seconds: float = VALUE_SECONDS) -> dict[str, float]:
    """ROI parameters in seconds: reading costs c_t = a per token; a corrected miss is worth
    ``value_seconds`` less its correction time b, a corrected false alarm ``value_seconds`` less c
    (never below zero: a correction is never worth less than nothing)."""
    if value_seconds <= 0:
        raise ValueError(f"the value of a correction must be positive, got {value_seconds}")
    return {
        "nc_fn": max(value_seconds - fit.seconds_per_fn_fix, 0.0),
        "nc_fp": max(value_seconds - fit.seconds_per_fp_fix, 0.0),
        "c_t": fit.seconds_per_token,
    }
