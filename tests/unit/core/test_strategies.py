import math

import numpy as np
import pytest

from learning.core.ordering import select
from learning.core.strategies import (
    EMPTY_SCORE,
    PRESETS,
    UnknownStrategyError,
    elb,
    entropy,
    get_strategy,
    lc_mean,
    lc_sum,
    lcub,
    roi,
)

O = 0  # column of "O" in the two-label arrays below: [P(O), P(PHI)]


def doc(n_confident_o: int, n_unsure_phi: int) -> np.ndarray:
    """Non-PHI tokens predicted O at 0.99, PHI tokens predicted PHI at 0.6."""
    rows = [[0.99, 0.01]] * n_confident_o + [[0.4, 0.6]] * n_unsure_phi
    return np.array(rows)


LONG = doc(1000, 5)
SHORT = doc(100, 10)


def test_lc_sum_prefers_the_long_document_as_in_style_guide():
    assert lc_sum(LONG, O) == pytest.approx(12.0)
    assert lc_sum(SHORT, O) == pytest.approx(5.0)


def test_lcub_prefers_the_short_dense_document():
    assert lcub(LONG, O, theta=0.9) == pytest.approx(2.0)
    assert lcub(SHORT, O, theta=0.9) == pytest.approx(4.0)
    # theta = 1.0 counts every token below certainty: LC-sum again.
    assert lcub(LONG, O, theta=1.0) == pytest.approx(12.0)
    # theta below every top probability: nothing counts.
    assert lcub(LONG, O, theta=0.6) == 0.0


def test_lc_mean_ignores_length():
    assert lc_mean(LONG, O) == pytest.approx(12.0 / 1005)
    assert lc_mean(SHORT, O) == pytest.approx(5.0 / 110)


def test_entropy_of_two_label_tokens_in_nats():
    m = np.array([[0.5, 0.5], [0.9, 0.1], [1.0, 0.0]])
    expected = math.log(2) + (-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)))
    assert entropy(m, O) == pytest.approx(expected)
    assert entropy(m, O) == pytest.approx(0.693147 + 0.325083, abs=1e-6)


def test_entropy_uses_all_labels():
    m = np.array([[0.25, 0.25, 0.25, 0.25]])
    assert entropy(m, O) == pytest.approx(math.log(4))


def test_elb_keeps_only_tokens_above_the_bound():
    m = np.array([[0.5, 0.5], [0.9, 0.1], [1.0, 0.0]])  # H = 0.693, 0.325, 0
    assert elb(m, O, rho=0.5) == pytest.approx(math.log(2))
    assert elb(m, O, rho=0.1) == pytest.approx(1.018230, abs=1e-6)
    assert elb(m, O, rho=1.0) == 0.0
    assert elb(m, O, rho=0.0) == pytest.approx(1.018230, abs=1e-6)


def test_roi_values():
    # ROI_2 (NC 0.1, c_t 0.01): a 0.99 token returns 0.2*0.0099 - 0.01 = -0.00802, a 0.6 token 0.038.
    assert roi(LONG, O, nc_fn=0.1, nc_fp=0.1, c_t=0.01) == pytest.approx(1000 * -0.00802 + 5 * 0.038)
    assert roi(SHORT, O, nc_fn=0.1, nc_fp=0.1, c_t=0.01) == pytest.approx(-0.422)
    # Without reading cost (ROI_1) the long document wins; with NC 0.5 (ROI_3) the dense one does.
    assert roi(LONG, O, nc_fn=0.1, nc_fp=0.1, c_t=0.0) == pytest.approx(2.22)
    assert roi(SHORT, O, nc_fn=0.1, nc_fp=0.1, c_t=0.0) == pytest.approx(0.678)
    assert roi(LONG, O, nc_fn=0.5, nc_fp=0.5, c_t=0.01) == pytest.approx(1.05)
    assert roi(SHORT, O, nc_fn=0.5, nc_fp=0.5, c_t=0.01) == pytest.approx(2.29)


def test_roi_uses_the_binary_view_and_the_sum_of_net_values():
    # O is the argmax at 0.4 but P(PHI) = 0.6 in the binary view: P(1-P) = 0.24 either way.
    multi = np.array([[0.3, 0.4, 0.3]])  # O in column 1
    assert roi(multi, 1, nc_fn=0.3, nc_fp=0.1, c_t=0.02) == pytest.approx(0.4 * 0.24 - 0.02)
    assert roi(np.array([[0.5, 0.5]]), O, nc_fn=0.3, nc_fp=0.1, c_t=0.0) == pytest.approx(0.1)


@pytest.mark.parametrize("name", ["lc-sum", "lc-mean", "entropy", "LCUB_6", "ELB_3", "ROI_1", "ROI_2"])
def test_empty_document_never_wins(name):
    strategy = get_strategy(name)
    empty = np.zeros((0, 2))
    assert strategy.score(empty, O) == EMPTY_SCORE
    scores = strategy.score_many([empty, SHORT, LONG], O)
    assert scores[0] == EMPTY_SCORE
    picked = select(scores, 2, np.random.default_rng(0))
    assert 0 not in picked


@pytest.mark.parametrize("name", ["random", "lc-sum", "lc-mean", "entropy", "LCUB_4", "ELB_2", "ROI_3"])
def test_score_many_matches_score(name):
    rng = np.random.default_rng(3)
    docs = []
    for length in (5, 0, 1, 17, 3):
        m = rng.dirichlet(np.ones(5) * 0.3, size=length)
        docs.append(m)
    strategy = get_strategy(name)
    one_by_one = np.array([strategy.score(m, 2) for m in docs])
    np.testing.assert_allclose(strategy.score_many(docs, 2), one_by_one)
    assert strategy.score_many([], 2).shape == (0,)


def test_presets():
    assert PRESETS["LCUB_1"].params == {"theta": 0.1}
    assert PRESETS["LCUB_6"].params == {"theta": 0.6}
    assert PRESETS["LCUB_10"].params == {"theta": 1.0}
    assert [PRESETS[f"ELB_{i}"].params["rho"] for i in range(1, 6)] == [0, 1, 0.1, 0.01, 0.001]
    assert PRESETS["ROI_1"].params == {"nc_fn": 0.1, "nc_fp": 0.1, "c_t": 0.0}
    assert PRESETS["ROI_2"].params == {"nc_fn": 0.1, "nc_fp": 0.1, "c_t": 0.01}
    assert PRESETS["ROI_3"].params == {"nc_fn": 0.5, "nc_fp": 0.5, "c_t": 0.01}
    assert get_strategy("lcub_6") is PRESETS["LCUB_6"]
    assert get_strategy("LC_SUM").kind == "lc-sum"


def test_get_strategy_overrides_and_measured_costs():
    measured = get_strategy("roi", nc_fn=0.2, nc_fp=0.05, c_t=0.004)
    assert measured.kind == "roi"
    assert measured.score(np.array([[0.5, 0.5]]), O) == pytest.approx(0.25 * 0.25 - 0.004)
    tuned = get_strategy("LCUB_6", theta=0.65)
    assert tuned.params == {"theta": 0.65}
    assert tuned.name == "lcub(theta=0.65)"
    assert get_strategy("LCUB_6", theta=0.6).name == "LCUB_6"


def test_get_strategy_errors():
    with pytest.raises(UnknownStrategyError, match="unknown query strategy"):
        get_strategy("most-confused")
    with pytest.raises(UnknownStrategyError, match="needs parameter"):
        get_strategy("roi", nc_fn=0.1)
    with pytest.raises(UnknownStrategyError, match="takes no parameter"):
        get_strategy("entropy", rho=0.1)


def test_random_strategy_draws_uniformly_through_select():
    random = get_strategy("random")
    pool = [SHORT, LONG, np.zeros((0, 2)), SHORT]
    scores = random.score_many(pool, O)
    assert scores.tolist() == [0.0, 0.0, 0.0, 0.0]
    rng = np.random.default_rng(1)
    counts = np.bincount([select(scores, 1, rng)[0] for _ in range(4000)], minlength=4)
    assert counts.min() > 900 and counts.max() < 1100


def test_parse_strategy():
    from learning.core.strategies import parse_strategy

    assert parse_strategy("LCUB_6") is PRESETS["LCUB_6"]
    measured = parse_strategy("roi:nc_fn=0.2, nc_fp=0.1,c_t=0.004")
    assert measured.params == {"nc_fn": 0.2, "nc_fp": 0.1, "c_t": 0.004}
    assert parse_strategy("elb:rho=0.5").params == {"rho": 0.5}
    with pytest.raises(UnknownStrategyError, match="name=number"):
        parse_strategy("elb:rho")
