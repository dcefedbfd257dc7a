"""The release planner (ALGORITHMS.md §7) against numbers worked by hand."""
import json
import math
from dataclasses import fields

import numpy as np
import pytest

from deid.core.release_planner import (
    ATTACKER_DEFAULTS,
    EPSILON,
    PUBLISHER_DEFAULTS,
    AttackerParameters,
    LearningCurve,
    Policy,
    PublisherParameters,
    attacker_best_response,
    attacker_gain,
    attacker_payoff,
    fit_learning_curve,
    plan,
    publisher_payoff,
)

# The release of the hand-worked examples: i = 10 PHI per document, β = 100 documents, so i·β = 1000 PHI.
# With R_p = 0.9, i·β·(1 − R_p) = 100 real identifiers leak among the surrogates.
RELEASE = dict(phi_per_document=10, documents_shared=100)
PUBLISHER = PublisherParameters(budget=2000, cost_per_document=10, fine_per_false_claim=1)


def attacker_with(v: float) -> AttackerParameters:
    return AttackerParameters(budget=2000, cost_per_document=10, value_per_identifier=v, fine_per_false_claim=10)


# ----------------------------------------------------------------------------------------- formulas


def test_attacker_payoff_by_hand():
    # γ = 20, R_a = P_a = 0.8: it finds 100·0.8 = 80 real identifiers and makes 80·(1/0.8 − 1) = 20 false
    # claims. v = 6, l_a = 10: gain = −20·10 + 80·6 − 20·10 = −200 + 480 − 200 = 80; payoff 2000 + 80.
    args = dict(RELEASE, gamma=20, publisher_recall=0.9, attacker_precision=0.8, attacker_recall=0.8)
    assert attacker_gain(**args, attacker=attacker_with(6)) == pytest.approx(80)
    assert attacker_payoff(**args, attacker=attacker_with(6)) == pytest.approx(2080)
    # v = 5: −200 + 400 − 200 = 0, the break-even point.
    assert attacker_gain(**args, attacker=attacker_with(5)) == pytest.approx(0, abs=1e-9)


def test_publisher_payoffs_by_hand():
    # α = 50, P_p = 0.95, R_p = 0.9, l_p = 1: over-redaction O = 1000·0.9·(1/0.95 − 1)·1 = 47.368421.
    # Budget left B_p − α·c_p = 2000 − 500 = 1500.
    # The attacker (v = 6, l_a = 10) attacks with P_a = R_a = 0.8: it finds 100·0.8 = 80 identifiers,
    # the leak L = 80·6 = 480, its fines F = 80·(1/0.8 − 1)·10 = 200.
    over = 1000 * 0.9 * (1 / 0.95 - 1)
    assert over == pytest.approx(47.368421)
    args = dict(
        RELEASE,
        alpha=50,
        publisher_precision=0.95,
        publisher_recall=0.9,
        attacker_precision=0.8,
        attacker_recall=0.8,
        publisher=PUBLISHER,
        attacker=attacker_with(6),
    )
    assert publisher_payoff(Policy.TRADITIONAL, **args) == pytest.approx(-47.368421 - 480)  # −527.368421
    assert publisher_payoff(Policy.SAFE_FORWARD, **args) == 0.0  # attacked: it does not share
    assert publisher_payoff(Policy.ATTACK_FORWARD, **args) == pytest.approx(1500 - 47.368421 - 480)  # 972.37
    # Attack-back: 1500 − O − 80·(6 − 0.25·10) = 1452.368421 − 280 = 1172.631579.
    assert publisher_payoff(Policy.ATTACK_BACK, **args) == pytest.approx(1172.631579)

    deterred = dict(args, attacker_precision=None, attacker_recall=None)
    # A deterred attacker leaks nothing and pays nothing: every policy but Traditional keeps 1500 − O.
    assert publisher_payoff(Policy.TRADITIONAL, **deterred) == pytest.approx(-47.368421)
    for policy in (Policy.SAFE_FORWARD, Policy.ATTACK_FORWARD, Policy.ATTACK_BACK):
        assert publisher_payoff(policy, **deterred) == pytest.approx(1452.631579)


def test_traditional_does_not_depend_on_budget_or_alpha():
    args = dict(
        RELEASE, publisher_precision=0.95, publisher_recall=0.9, attacker_precision=0.8, attacker_recall=0.8,
        attacker=attacker_with(6),
    )
    a = publisher_payoff("traditional", alpha=10, publisher=PUBLISHER, **args)
    b = publisher_payoff("traditional", alpha=150, publisher=PublisherParameters(5000, 20, 1), **args)
    assert a == pytest.approx(b) == pytest.approx(-527.368421)


def test_safe_forward_is_zero_whenever_the_attacker_attacks():
    # Even a release that would pay handsomely without an attack is not shared.
    for recall in (0.5, 0.9, 0.99):
        assert publisher_payoff(
            Policy.SAFE_FORWARD,
            alpha=0,
            **RELEASE,
            publisher_precision=1.0,
            publisher_recall=recall,
            attacker_precision=0.5,
            attacker_recall=0.01,
            publisher=PUBLISHER,
            attacker=attacker_with(6),
        ) == 0.0


# ----------------------------------------------------------------------------------- best response


def test_best_response_finds_the_interior_optimum():
    # P_a = 1 (no false claims), R_a(γ) = 1 − γ^(−1/2), leaked K = 100, c_a = 10, v = 12.8:
    # gain(γ) = −10γ + 1280·(1 − γ^(−1/2)); d/dγ = 0 at γ^(3/2) = 1280/20 = 64, γ = 16;
    # gain(16) = −160 + 1280·0.75 = 800, gain(15) = 799.50, gain(17) = 799.55.
    response = attacker_best_response(
        **RELEASE,
        publisher_recall=0.9,
        attacker_precision=LearningCurve.power_law(1, 0, 1),
        attacker_recall=LearningCurve.power_law(1, 1, 0.5),
        attacker=AttackerParameters(2000, 10, 12.8, 10),
    )
    assert response.attacks
    assert response.best_documents == 16
    assert response.best_recall == pytest.approx(0.75)
    assert response.best_gain == pytest.approx(800)
    assert response.gain == pytest.approx(800)
    assert response.payoff == pytest.approx(2800)


FLAT = LearningCurve.interpolated([1], [0.8])  # 0.8 from γ = 1 on


@pytest.mark.parametrize(
    ("v", "attacks"),
    # P_a = R_a = 0.8, K = 100, c_a = 10, l_a = 10: gain(γ) = −10γ + 80·(v − 2.5), best at γ = 1,
    # positive when v > 2.5 + 10/80 = 2.625. v = 2.6: 80·0.1 − 10 = −2; v = 2.65: 80·0.15 − 10 = 2.
    [(1.0, False), (2.6, False), (2.625, False), (2.65, True), (5.0, True)],
)
def test_attack_decision_flips_as_v_grows(v, attacks):
    response = attacker_best_response(
        **RELEASE, publisher_recall=0.9, attacker_precision=FLAT, attacker_recall=FLAT, attacker=attacker_with(v)
    )
    assert response.attacks is attacks
    assert response.best_documents == 1
    assert response.best_gain == pytest.approx(80 * (v - 2.5) - 10)
    assert response.payoff == pytest.approx(2000 + (80 * (v - 2.5) - 10 if attacks else 0))
    assert response.gain == pytest.approx(80 * (v - 2.5) - 10 if attacks else 0)


def test_attack_is_limited_by_budget_and_by_the_shared_documents():
    # Recall rises 0.9/99 per document from 0.1 at γ = 1. With i = 1, β = 100 (K·v = 100·100) each document
    # brings 10000·0.9/99 ≈ 90.9 > c_a = 10, so the attacker annotates all it can afford: ⌊50/10⌋ = 5.
    # With i = 100, β = 3 (K·v = 300·100) each brings ≈ 272.7: it annotates the β = 3 shared documents.
    rising = LearningCurve.interpolated([1, 100], [0.1, 1.0])
    one = LearningCurve.power_law(1, 0, 1)
    rich = AttackerParameters(budget=50, cost_per_document=10, value_per_identifier=100, fine_per_false_claim=0)
    common = dict(publisher_recall=0.0, attacker_precision=one, attacker_recall=rising, attacker=rich)
    assert attacker_best_response(phi_per_document=1, documents_shared=100, **common).best_documents == 5
    assert attacker_best_response(phi_per_document=100, documents_shared=3, **common).best_documents == 3


def test_an_attacker_who_cannot_afford_a_document_does_not_attack():
    poor = AttackerParameters(budget=5, cost_per_document=10, value_per_identifier=1000, fine_per_false_claim=0)
    response = attacker_best_response(
        **RELEASE, publisher_recall=0.5, attacker_precision=FLAT, attacker_recall=FLAT, attacker=poor
    )
    assert not response.attacks
    assert response.best_documents is None and response.best_gain is None
    assert response.payoff == 5.0 and response.gain == 0.0


# ------------------------------------------------------------------------------------------ the plan

# α ∈ {2, 3, 4, 5} (B_p = 50, c_p = 10, 2 annotated), i = 1, β = 10, l_p = 1.
# Publisher curve: P = 0.5, 0.8, 0.9, 0.95 and R = 0.6, 0.8, 0.9, 0.95.
# Over-redaction O = 10·R·(1/P − 1) = 6, 2, 1, 0.5. Budget left 50 − 10α = 30, 20, 10, 0.
# Attacker: P_a = R_a = 0.5 from γ = 1, c_a = 1, B_a = 100, v = 4, l_a = 2.
# Leaked K = 10·(1 − R) = 4, 2, 1, 0.5; gain(γ) = −γ + K·0.5·(4 − 2·1) = K − γ, best at γ = 1:
# 3, 1, 0, −0.5 — it attacks at α = 2 and 3 only (0 is a tie, and a tie deters).
# Leak L = K·0.5·4 = 8, 4 (then 0); fines F = K·0.5·(1/0.5 − 1)·2 = 4, 2 (then 0).
SMALL_PRECISION = LearningCurve.interpolated([2, 3, 4, 5], [0.5, 0.8, 0.9, 0.95])
SMALL_RECALL = LearningCurve.interpolated([2, 3, 4, 5], [0.6, 0.8, 0.9, 0.95])
HALF = LearningCurve.interpolated([1], [0.5])


def small_plan(**overrides):
    args = dict(
        precision_curve=SMALL_PRECISION,
        recall_curve=SMALL_RECALL,
        annotated_documents=2,
        phi_per_document=1,
        documents_shared=10,
        publisher=PublisherParameters(50, 10, 1),
        attacker=AttackerParameters(100, 1, 4, 2),
        attacker_precision_curve=HALF,
        attacker_recall_curve=HALF,
    )
    return plan(**(args | overrides))


def test_plan_on_a_small_grid_by_hand():
    result = small_plan()
    assert result.alphas == [2, 3, 4, 5]
    assert result.precision == pytest.approx([0.5, 0.8, 0.9, 0.95])
    assert result.recall == pytest.approx([0.6, 0.8, 0.9, 0.95])
    assert result.attacker_attacks == [True, True, False, False]
    assert result.attacker_documents == [1, 1, 1, 1]
    assert result.attacker_gains == pytest.approx([3, 1, 0, -0.5], abs=1e-9)

    out = result.outcomes
    # Traditional −O − L: −14, −6, −1, −0.5; it spends the whole budget, so α = 5 whatever the payoffs.
    assert out["traditional"].publisher_payoffs == pytest.approx([-14, -6, -1, -0.5])
    assert (out["traditional"].best_alpha, out["traditional"].best_payoff) == (5, pytest.approx(-0.5))
    assert out["traditional"].should_share
    # Safe-forward: 0 where attacked, else 50 − 10α − O: 0, 0, 9, −0.5; best α = 4.
    assert out["safe_forward"].publisher_payoffs == pytest.approx([0, 0, 9, -0.5])
    assert out["safe_forward"].shares == [False, False, True, True]
    assert (out["safe_forward"].best_alpha, out["safe_forward"].best_payoff) == (4, pytest.approx(9))
    assert out["safe_forward"].attacker_payoffs == [100.0] * 4
    # Attack-forward 50 − 10α − O − L: 16, 14, 9, −0.5; best α = 2.
    assert out["attack_forward"].publisher_payoffs == pytest.approx([16, 14, 9, -0.5])
    assert (out["attack_forward"].best_alpha, out["attack_forward"].best_payoff) == (2, pytest.approx(16))
    # Attack-back adds F: 20, 16, 9, −0.5; best α = 2, where the attacker attacks.
    assert out["attack_back"].publisher_payoffs == pytest.approx([20, 16, 9, -0.5])
    assert (out["attack_back"].best_alpha, out["attack_back"].best_payoff) == (2, pytest.approx(20))
    # The attacker's payoff B_a + gain when it attacks: 103, 101, then 100.
    assert out["attack_forward"].attacker_payoffs == pytest.approx([103, 101, 100, 100])

    assert result.recommendation.startswith("Share the 10 documents after annotating 4 documents in total (2 more)")
    assert "expected payoff is 9.00" in result.recommendation
    assert "perverse incentive" in result.recommendation  # Attack-back pays 20 > 16 by inviting the attack


def test_equal_payoffs_choose_the_smaller_alpha():
    # With l_p = 0 and c_p = 0 every deterred α pays the same B_p: the cheaper release wins.
    result = small_plan(publisher=PublisherParameters(50, 0, 0), max_documents=5)
    assert result.outcomes["safe_forward"].publisher_payoffs == pytest.approx([0, 0, 50, 50])
    assert result.outcomes["safe_forward"].best_alpha == 4


def test_plan_says_do_not_share_when_the_attacker_is_never_deterred():
    # v = 100: gain = K·0.5·(100 − 2) − 1 ≥ 0.5·49 − 1 > 0 at every α.
    result = small_plan(attacker=AttackerParameters(100, 1, 100, 2))
    safe = result.outcomes["safe_forward"]
    assert result.attacker_attacks == [True] * 4
    assert safe.publisher_payoffs == [0.0] * 4
    assert safe.best_alpha is None and not safe.should_share and safe.best_payoff == 0.0
    assert result.recommendation.startswith("Do not share: at every affordable amount of annotation (2–5 documents)")
    # Attack-forward 50 − 10α − O − K·0.5·100: 30 − 6 − 200, 20 − 2 − 100, 10 − 1 − 50, 0 − 0.5 − 25;
    # its best is −25.5 at α = 5, a loss.
    forward = result.outcomes["attack_forward"]
    assert forward.publisher_payoffs == pytest.approx([-176, -82, -41, -25.5])
    assert (forward.best_alpha, forward.best_payoff) == (5, pytest.approx(-25.5))
    assert "would lose money" in result.recommendation


def test_plan_says_do_not_share_when_deterrence_does_not_pay():
    # l_p = 20 multiplies O by 20: deterred payoffs 10 − 20 = −10 at α = 4 and 0 − 10 = −10 at α = 5.
    result = small_plan(publisher=PublisherParameters(50, 10, 20))
    safe = result.outcomes["safe_forward"]
    assert safe.publisher_payoffs == pytest.approx([0, 0, -10, -10])
    assert safe.best_alpha == 4 and not safe.should_share
    assert result.recommendation.startswith("Do not share: the attacker is deterred from α = 4 on")


def test_the_attacker_learns_along_the_publishers_curve_by_default():
    curve = LearningCurve.interpolated([10, 50, 100], [0.6, 0.8, 0.9])
    common = dict(recall_curve=curve, annotated_documents=20, phi_per_document=5, documents_shared=300)
    implicit = plan(precision_curve=curve, **common)
    explicit = plan(precision_curve=curve, attacker_precision_curve=curve, attacker_recall_curve=curve, **common)
    assert implicit.as_dict() == explicit.as_dict()


def test_alpha_grid_spans_the_budget_and_the_result_is_json():
    curve = fit_learning_curve([10, 20, 40, 80], [0.55, 0.65, 0.72, 0.78])
    result = plan(
        precision_curve=curve, recall_curve=curve, annotated_documents=20, phi_per_document=8, documents_shared=500
    )
    # Defaults: B_p = 2000 at c_p = 10 pays for 200 documents; 181 integers thinned to 50 points.
    assert result.alphas[0] == 20 and result.alphas[-1] == 200 and len(result.alphas) == 50
    assert all(b > a for a, b in zip(result.alphas, result.alphas[1:]))
    for outcome in result.outcomes.values():
        assert len(outcome.publisher_payoffs) == len(outcome.attacker_payoffs) == 50
    assert all(lo <= v <= hi for lo, v, hi in zip(result.recall_lower, result.recall, result.recall_upper))
    data = json.loads(json.dumps(result.as_dict()))
    assert set(data["outcomes"]) == {"traditional", "safe_forward", "attack_forward", "attack_back"}
    assert data["outcomes"]["safe_forward"]["policy"] == "safe_forward"
    assert "extrapolate" in result.recommendation  # the plan reaches beyond α = 80


# ------------------------------------------------------------------------------------ learning curves


def test_fit_recovers_a_known_power_law_and_its_band_holds_the_truth():
    a, b, c = 0.92, 0.7, 0.6
    sizes = np.repeat([10, 20, 40, 60, 80, 100, 150, 200], 2).astype(float)
    noisy = a - b * sizes**-c + np.random.default_rng(1).normal(0, 0.005, sizes.size)
    curve = fit_learning_curve(sizes, noisy)
    assert curve.method == "power_law"
    fa, fb, fc = curve.params
    assert fa == pytest.approx(a, abs=0.02) and fb == pytest.approx(b, abs=0.1) and fc == pytest.approx(c, abs=0.1)
    probe = np.array([10.0, 100.0, 200.0, 400.0, 1000.0])  # measured, then extrapolated to 5× the data
    truth = a - b * probe**-c
    estimate = curve.predict(probe)
    assert np.all(estimate.lower <= truth) and np.all(truth <= estimate.upper)
    assert np.all(estimate.upper - estimate.lower < 0.03)
    width = estimate.upper - estimate.lower
    assert width[-1] > width[1]  # wider where it extrapolates


def test_fit_of_noise_free_points_is_exact():
    sizes = np.array([5, 10, 20, 40, 80, 160], dtype=float)
    curve = fit_learning_curve(sizes, 0.8 - 0.5 * sizes**-0.7)
    assert curve.params == pytest.approx((0.8, 0.5, 0.7), abs=1e-4)
    assert curve.predict(1000).value == pytest.approx(0.8 - 0.5 * 1000**-0.7, abs=1e-5)


def test_three_points_fit_exactly_and_fall_back_to_the_monotone_band():
    # y = 0.7 − 2/α passes through (10, 0.5), (20, 0.6), (40, 0.65): no degrees of freedom left, no covariance.
    curve = fit_learning_curve([10, 20, 40], [0.5, 0.6, 0.65])
    assert curve.method == "power_law" and curve.params == pytest.approx((0.7, 2.0, 1.0), abs=1e-4)
    estimate = curve.predict([15, 100])
    assert estimate.value == pytest.approx([0.7 - 2 / 15, 0.68], abs=1e-4)
    assert estimate.lower == pytest.approx([0.5, 0.65]) and estimate.upper == pytest.approx([0.6, 1.0])


def test_fallback_with_one_point():
    curve = fit_learning_curve([10], [0.7])
    assert curve.method == "monotone"
    estimate = curve.predict([0, 5, 10, 50])
    # From (0, ε) to (10, 0.7), then constant: 5 → ε + (0.7 − ε)/2.
    assert estimate.value == pytest.approx([EPSILON, (EPSILON + 0.7) / 2, 0.7, 0.7])
    assert estimate.lower == pytest.approx([EPSILON, EPSILON, 0.7, 0.7])
    assert estimate.upper == pytest.approx([0.7, 0.7, 0.7, 1.0])


def test_fallback_with_two_points():
    rising = fit_learning_curve([10, 30], [0.6, 0.8])
    assert rising.method == "monotone"
    assert rising.predict([20, 60]).value == pytest.approx([0.7, 0.8])
    assert rising.predict(20).lower == pytest.approx([0.6]) and rising.predict(20).upper == pytest.approx([0.8])
    # A falling pair is pooled to its mean: learning curves are taken as non-decreasing.
    falling = fit_learning_curve([10, 30], [0.8, 0.6])
    assert falling.values == pytest.approx((0.7, 0.7))
    assert falling.predict([10, 30, 90]).value == pytest.approx([0.7, 0.7, 0.7])
    # Repeated sizes are averaged before anything else: two distinct α, still the fallback.
    repeated = fit_learning_curve([10, 10, 30], [0.5, 0.7, 0.8])
    assert repeated.method == "monotone" and repeated.values == pytest.approx((0.6, 0.8))


def test_known_curves_are_clipped_to_epsilon_and_one():
    curve = LearningCurve.power_law(1.0, 2.0, 1.0)  # 1 − 2/α: negative below α = 2
    assert curve.predict([0, 1, 4]).value == pytest.approx([EPSILON, EPSILON, 0.5])
    assert curve.predict(4).lower == curve.predict(4).upper == pytest.approx([0.5])


# --------------------------------------------------------------------------------------- invalid input


@pytest.mark.parametrize(
    ("sizes", "values", "message"),
    [
        ([], [], "at least one measured point"),
        ([10, 20], [0.5], "one value per size"),
        ([0, 10], [0.1, 0.5], "must be > 0"),
        ([10, 20], [0.5, 1.2], r"must lie in \[0, 1\]"),
        ([10, 20], [-0.1, 0.5], r"must lie in \[0, 1\]"),
    ],
)
def test_invalid_curves(sizes, values, message):
    with pytest.raises(ValueError, match=message):
        fit_learning_curve(sizes, values)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="attacker budget must be a finite number ≥ 0, got -1"):
        AttackerParameters(budget=-1)
    with pytest.raises(ValueError, match="publisher budget must be a finite number ≥ 0"):
        PublisherParameters(budget=-100)
    with pytest.raises(ValueError, match="publisher cost per document must be"):
        PublisherParameters(cost_per_document=math.nan)
    with pytest.raises(ValueError, match="attacker fine per false claim must be"):
        AttackerParameters(fine_per_false_claim=-0.5)
    with pytest.raises(ValueError, match="a power-law curve needs"):
        LearningCurve.power_law(1.5, 0, 1)
    with pytest.raises(ValueError, match="must be ≥ 0"):
        LearningCurve.power_law(1, 0, 1).predict(-1)


@pytest.mark.parametrize("precision", [0.0, -0.2, 1.01, math.nan])
def test_precision_outside_zero_one(precision):
    with pytest.raises(ValueError, match=r"publisher precision must lie in \(0, 1\]"):
        publisher_payoff(
            Policy.ATTACK_FORWARD, alpha=1, **RELEASE, publisher_precision=precision, publisher_recall=0.9,
            attacker_precision=None, attacker_recall=None, publisher=PUBLISHER, attacker=attacker_with(5),
        )
    with pytest.raises(ValueError, match=r"attacker precision must lie in \(0, 1\]"):
        attacker_gain(
            gamma=1, **RELEASE, publisher_recall=0.9, attacker_precision=precision, attacker_recall=0.5,
            attacker=attacker_with(5),
        )


def test_invalid_payoff_arguments():
    args = dict(RELEASE, publisher_recall=0.9, attacker_precision=0.8, attacker_recall=0.8, attacker=attacker_with(5))
    with pytest.raises(ValueError, match=r"attacker recall must lie in \[0, 1\]"):
        attacker_gain(gamma=1, **(args | {"attacker_recall": 1.5}))
    with pytest.raises(ValueError, match="exceed the attacker's budget"):
        attacker_gain(gamma=201, **(args | {"documents_shared": 1000}))
    with pytest.raises(ValueError, match="only shared documents"):
        attacker_gain(gamma=101, **args)
    with pytest.raises(ValueError, match="both the attacker's precision and recall"):
        publisher_payoff(
            "attack_back", alpha=1, **RELEASE, publisher_precision=0.9, publisher_recall=0.9,
            attacker_precision=0.8, attacker_recall=None, publisher=PUBLISHER, attacker=attacker_with(5),
        )
    with pytest.raises(ValueError, match="is not a valid Policy"):
        publisher_payoff(
            "hope", alpha=1, **RELEASE, publisher_precision=0.9, publisher_recall=0.9,
            attacker_precision=None, attacker_recall=None, publisher=PUBLISHER, attacker=attacker_with(5),
        )


def test_invalid_plans():
    with pytest.raises(ValueError, match="pays for 5 annotated documents .* but 6 are annotated already"):
        small_plan(annotated_documents=6)
    with pytest.raises(ValueError, match=r"c_p = 0\): give max_documents"):
        small_plan(publisher=PublisherParameters(50, 0, 1))
    with pytest.raises(ValueError, match="shared documents must be a whole number ≥ 1"):
        small_plan(documents_shared=0)
    with pytest.raises(ValueError, match="PHI instances per document"):
        small_plan(phi_per_document=-1)


# -------------------------------------------------------------------------------------------- defaults


def test_defaults_for_the_settings_form():
    assert set(ATTACKER_DEFAULTS) == {f.name for f in fields(AttackerParameters)}
    assert set(PUBLISHER_DEFAULTS) == {f.name for f in fields(PublisherParameters)}
    attacker, publisher = AttackerParameters(), PublisherParameters()
    for defaults, parameters in ((ATTACKER_DEFAULTS, attacker), (PUBLISHER_DEFAULTS, publisher)):
        for name, default in defaults.items():
            assert getattr(parameters, name) == default.value
            assert default.label and default.help.endswith(".")
    # With the defaults an attack pays only above precision l_a / (v + l_a) = 2/3.
    assert attacker.fine_per_false_claim / (attacker.value_per_identifier + attacker.fine_per_false_claim) == (
        pytest.approx(2 / 3)
    )
