"""Fitting what a record costs: seconds ≈ a·tokens + b·FN fixes + c·FP fixes."""
from __future__ import annotations

import numpy as np
import pytest

from learning.core.costs import MIN_RECORDS, fit_costs, measured_roi_params


def _records(n: int, a: float, b: float, c: float, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(100, 1500, n)
    fn = rng.integers(0, 8, n)
    fp = rng.integers(0, 6, n)
    seconds = a * tokens + b * fn + c * fp + rng.normal(0, noise, n)
    return tokens, fn, fp, np.clip(seconds, 1, None)


def test_the_fit_recovers_known_costs_with_honest_errors():
    fit = fit_costs(*_records(200, 0.12, 9.0, 4.0, noise=5.0))
    assert fit.seconds_per_token == pytest.approx(0.12, abs=0.01)
    assert fit.seconds_per_fn_fix == pytest.approx(9.0, abs=1.5)
    assert fit.seconds_per_fp_fix == pytest.approx(4.0, abs=1.5)
    # The truth lies within three standard errors of each estimate.
    assert abs(fit.seconds_per_fn_fix - 9.0) < 3 * fit.se_per_fn_fix
    assert abs(fit.seconds_per_fp_fix - 4.0) < 3 * fit.se_per_fp_fix
    assert fit.r2 > 0.9 and fit.n_records == 200
    assert fit.predict(1000, 2, 1) == pytest.approx(1000 * fit.seconds_per_token + 2 * fit.seconds_per_fn_fix
                                                    + fit.seconds_per_fp_fix)


def test_exact_data_are_fitted_exactly():
    tokens = [100, 200, 300, 400, 500, 600, 700, 800]
    fn = [0, 1, 0, 2, 1, 3, 0, 1]
    fp = [1, 0, 2, 0, 1, 1, 3, 0]
    seconds = [0.1 * t + 10 * f + 5 * p for t, f, p in zip(tokens, fn, fp)]
    fit = fit_costs(tokens, fn, fp, seconds)
    assert (fit.seconds_per_token, fit.seconds_per_fn_fix, fit.seconds_per_fp_fix) == pytest.approx((0.1, 10, 5))
    assert fit.residual_seconds == pytest.approx(0, abs=1e-6) and fit.r2 == pytest.approx(1.0)


def test_costs_are_never_negative():
    # Records where more false positives go with less time: least squares would give c < 0.
    tokens = [500] * 10
    fn = [0] * 10
    fp = list(range(10))
    seconds = [100 - 3 * p for p in fp]
    fit = fit_costs(tokens, fn, fp, seconds)
    assert fit.seconds_per_fp_fix == 0.0 and fit.seconds_per_fn_fix == 0.0
    assert fit.se_per_fp_fix is None  # a coefficient held at its bound has no standard error
    assert fit.seconds_per_token > 0


def test_too_few_timed_records_give_no_fit():
    tokens, fn, fp, seconds = _records(MIN_RECORDS - 1, 0.1, 5, 5, 1)
    assert fit_costs(tokens, fn, fp, seconds) is None
    tokens, fn, fp, seconds = _records(MIN_RECORDS + 4, 0.1, 5, 5, 1)
    seconds[:5] = 0  # untimed records (imported, or submitted without the page's timer) say nothing
    assert fit_costs(tokens, fn, fp, seconds) is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="equally long"):
        fit_costs([1, 2], [0], [0, 0], [1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        fit_costs([1] * 9, [0] * 9, [-1] * 9, [1] * 9)


def test_measured_roi_parameters_come_from_the_fit():
    fit = fit_costs(*_records(100, 0.2, 12.0, 3.0, noise=0.01))
    params = measured_roi_params(fit, value_seconds=30)
    assert params["c_t"] == pytest.approx(fit.seconds_per_token)
    assert params["nc_fn"] == pytest.approx(30 - fit.seconds_per_fn_fix)
    assert params["nc_fp"] == pytest.approx(30 - fit.seconds_per_fp_fix)
    assert measured_roi_params(fit, value_seconds=5)["nc_fn"] == 0.0  # a correction costing more than it is worth
    with pytest.raises(ValueError):
        measured_roi_params(fit, value_seconds=0)
