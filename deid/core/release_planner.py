"""Release planner: a Stackelberg game between a publisher and an attacker (ALGORITHMS.md §7).

The publisher (leader) annotates α documents at c_p each, trains a model with precision P_p(α) and
recall R_p(α), and shares β de-identified documents with i PHI instances each. Detected PHI is replaced by
surrogates, so the i·β·(1 − R_p) leaked real identifiers hide among fakes. The attacker (follower) sees
the release and may annotate γ of the shared documents at c_a each to train a real-versus-fake model with
P_a(γ), R_a(γ); every identifier it claims is worth v when real and costs a fine l_a when fake.

This module is the pure computation behind the planner page: learning curves with an uncertainty band,
the attacker's best response, the publisher's payoff under the four policies of §7 and :func:`plan`,
which evaluates them over a grid of α and writes a recommendation. It imports no Django.

Decisions:

- **Learning curves.** With at least three distinct α, precision and recall are each fitted with the
  inverse power law y = a − b·α^(−c), a ∈ [0, 1], b ≥ 0, c ∈ [0.01, 5] (``scipy.optimize.curve_fit``,
  several starting exponents, the least squared error kept). a ≤ 1 and b ≥ 0 keep the curve at most 1
  and non-decreasing; values are clipped to [ε, 1] with ε = 1e-3, so 1/P − 1 stays finite (≤ 999) and a
  curve evaluated at α = 0 (no training data, no model) reads ε. The band is the central ``level`` range
  of the curve under parameters drawn from the fit's covariance (seeded generator, drawn once at fit
  time): a confidence band for the curve, which widens where the curve is extrapolated. It rests on
  the fit's linearisation, so with a dozen points it holds the true curve a little less often than
  ``level`` says (about 0.9 for 0.95 in simulations). With fewer than three distinct α, when the fit
  fails, or when it has no finite covariance (three points fitted exactly), the band says only what
  monotonicity implies: between the neighbouring measured values, up to 1 beyond the last one and down
  to ε before the first. Without a fit the value is the monotone (pool-adjacent-violators)
  piecewise-linear interpolation of the measurements, from (0, ε) to the first point and constant after
  the last, which assumes no further gain beyond what was measured.
- **The attacker** learns like the publisher's model (the same curves) unless other curves are given.
  It can annotate only shared documents it can pay for: γ ≤ min(β, ⌊B_a / c_a⌋). B_a enters its payoff as
  a constant (money it keeps when it does not attack), so it matters only through what it can afford;
  the attacker's *gain* is its payoff minus B_a, the payoff of not attacking. It attacks only when the
  best affordable γ ≥ 1 gives a strictly positive gain; a tie (zero up to rounding) leaves it deterred.
  γ = 0 is "no attack", not an attack with an untrained model. The γ grid is every integer when there
  are at most 200, else 200 geometrically spaced integers (curves change fastest at small γ).
- **R_a in the publisher's payoff** is the attacker's recall at its best response, 0 when it does not
  attack, so a deterred attacker leaks nothing and pays no fines.
- **Budget.** B_p pays for all α annotated documents, those already annotated included, so the grid runs
  from the current count to ⌊B_p / c_p⌋ (and to ``max_documents`` if given). *Traditional* spends all
  the budget: its α is the largest on the grid and its formula has no B_p − α·c_p term. Not sharing is
  worth 0, so a policy whose best payoff is not positive is advised against (Traditional excepted: it
  must publish). Equal payoffs are resolved towards the smaller α, the cheaper release.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "ATTACKER_DEFAULTS",
    "EPSILON",
    "POLICY_DESCRIPTIONS",
    "PUBLISHER_DEFAULTS",
    "AttackerParameters",
    "AttackerResponse",
    "CurveEstimate",
    "LearningCurve",
    "ParameterDefault",
    "Policy",
    "PolicyOutcome",
    "PublisherParameters",
    "ReleasePlan",
    "attacker_best_response",
    "attacker_gain",
    "attacker_payoff",
    "fit_learning_curve",
    "plan",
    "publisher_payoff",
]

EPSILON = 1e-3
"""The floor of every precision and recall the planner uses (see the module's decisions)."""

_C_BOUNDS = (0.01, 5.0)
_START_EXPONENTS = (0.2, 0.5, 1.0, 2.0)
_MAX_GAMMA_POINTS = 200
_TIE_TOLERANCE = 1e-9  # relative to the amounts compared


# --------------------------------------------------------------------------------------------------
# Parameters and their defaults


@dataclass(frozen=True)
class ParameterDefault:
    """A default for a settings form: its value, a label, the unit and one sentence of help."""

    value: float
    label: str
    unit: str
    help: str


ATTACKER_DEFAULTS: dict[str, ParameterDefault] = {
    "budget": ParameterDefault(
        2000.0,
        "Attacker's budget (B_a)",
        "money",
        "What the attacker can spend on annotating shared documents; set like the publisher's $2,000 of the "
        "published example so that both sides can afford a comparable model.",
    ),
    "cost_per_document": ParameterDefault(
        10.0,
        "Attacker's cost per annotated document (c_a)",
        "money per document",
        "About ten minutes of a paid annotator per clinical note, the same cost the publisher faces by "
        "default, since the attacker is assumed to learn like the publisher.",
    ),
    "value_per_identifier": ParameterDefault(
        5.0,
        "Value of one leaked identifier (v)",
        "money per identifier",
        "What one real identifier recovered is worth to the attacker, and so what its leak costs the "
        "publisher; an assumed order of magnitude for a resold or exploited identifier — set it from your "
        "threat model.",
    ),
    "fine_per_false_claim": ParameterDefault(
        10.0,
        "Attacker's fine per false claim (l_a)",
        "money per claim",
        "What the attacker loses for each surrogate it wrongly claims to be real (legal exposure, wasted "
        "follow-up, lost credibility); twice v by default, so an attack pays only above precision 2/3.",
    ),
}
"""Defaults of :class:`AttackerParameters`, with the help texts a settings form shows."""

PUBLISHER_DEFAULTS: dict[str, ParameterDefault] = {
    "budget": ParameterDefault(
        2000.0,
        "Publisher's budget (B_p)",
        "money",
        "The money set aside for this release, annotation of all training documents included (the "
        "published example's $2,000).",
    ),
    "cost_per_document": ParameterDefault(
        10.0,
        "Publisher's cost per annotated document (c_p)",
        "money per document",
        "About ten minutes of a paid annotator to annotate and check one clinical note.",
    ),
    "fine_per_false_claim": ParameterDefault(
        1.0,
        "Cost of one over-redaction (l_p)",
        "money per false PHI",
        "The utility lost when a word that is not PHI is replaced by a surrogate; a tenth of the "
        "attacker's fine by default, because over-redaction harms the data, not a person.",
    ),
}
"""Defaults of :class:`PublisherParameters`, with the help texts a settings form shows."""


def _check_amounts(owner: str, parameters: Any) -> None:
    """Every field must be a finite amount ≥ 0; stored as float so that results are plain floats."""
    for f in fields(parameters):
        value = getattr(parameters, f.name)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (ok and math.isfinite(value) and value >= 0):
            raise ValueError(f"{owner} {f.name.replace('_', ' ')} must be a finite number ≥ 0, got {value!r}")
        object.__setattr__(parameters, f.name, float(value))


@dataclass(frozen=True)
class AttackerParameters:
    """The attacker's money: budget B_a, cost c_a per document, value v per identifier, fine l_a per claim."""

    budget: float = ATTACKER_DEFAULTS["budget"].value
    cost_per_document: float = ATTACKER_DEFAULTS["cost_per_document"].value
    value_per_identifier: float = ATTACKER_DEFAULTS["value_per_identifier"].value
    fine_per_false_claim: float = ATTACKER_DEFAULTS["fine_per_false_claim"].value

    def __post_init__(self) -> None:
        _check_amounts("attacker", self)


@dataclass(frozen=True)
class PublisherParameters:
    """The publisher's money: budget B_p, cost c_p per document, cost l_p per over-redacted word."""

    budget: float = PUBLISHER_DEFAULTS["budget"].value
    cost_per_document: float = PUBLISHER_DEFAULTS["cost_per_document"].value
    fine_per_false_claim: float = PUBLISHER_DEFAULTS["fine_per_false_claim"].value

    def __post_init__(self) -> None:
        _check_amounts("publisher", self)


class Policy(StrEnum):
    """The publisher's four policies of ALGORITHMS.md §7."""

    TRADITIONAL = "traditional"
    SAFE_FORWARD = "safe_forward"
    ATTACK_FORWARD = "attack_forward"
    ATTACK_BACK = "attack_back"


POLICY_DESCRIPTIONS: dict[Policy, str] = {
    Policy.TRADITIONAL: "Must publish and spends the whole budget on annotation.",
    Policy.SAFE_FORWARD: "Shares only where the attacker is deterred; fines go to a third party.",
    Policy.ATTACK_FORWARD: "Shares whether or not the attacker attacks; fines go to a third party.",
    Policy.ATTACK_BACK: "Shares whether or not the attacker attacks; the attacker's fines are paid to the publisher.",
}


# --------------------------------------------------------------------------------------------------
# Learning curves


class CurveEstimate(NamedTuple):
    """A learning curve read at some α: the value and its band, arrays of the same shape."""

    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def _power_law(alpha: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    return a - b * np.power(alpha, -c)


def _isotonic(values: np.ndarray) -> np.ndarray:
    """The least-squares non-decreasing sequence (pool adjacent violators, equal weights)."""
    blocks: list[list[float]] = []  # [mean, count]
    for v in values:
        blocks.append([float(v), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            prev = blocks[-1]
            prev[0] = (prev[0] * prev[1] + mean * count) / (prev[1] + count)
            prev[1] += count
    return np.concatenate([np.full(int(n), m) for m, n in blocks])


@dataclass(frozen=True, eq=False)
class LearningCurve:
    """Precision or recall as a function of the number α of annotated documents.

    Build one with :func:`fit_learning_curve` from measurements, or with :meth:`power_law` /
    :meth:`interpolated` from known numbers. ``method`` is ``"power_law"`` (``params`` = (a, b, c)) or
    ``"monotone"`` (piecewise-linear through the monotone ``values``). ``sizes``/``values`` are the
    measured points, sorted, repeated sizes averaged and (for ``"monotone"``) made non-decreasing.
    """

    method: str
    sizes: tuple[float, ...]
    values: tuple[float, ...]
    params: tuple[float, float, float] | None = None
    level: float = 0.95
    param_samples: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def power_law(cls, a: float, b: float, c: float) -> LearningCurve:
        """A known curve a − b·α^(−c) without uncertainty (its band has zero width)."""
        if not (0 <= a <= 1 and b >= 0 and c > 0):
            raise ValueError(f"a power-law curve needs 0 ≤ a ≤ 1, b ≥ 0 and c > 0, got a={a}, b={b}, c={c}")
        return cls("power_law", (), (), (float(a), float(b), float(c)))

    @classmethod
    def interpolated(cls, sizes: ArrayLike, values: ArrayLike) -> LearningCurve:
        """The monotone piecewise-linear curve through measured points (the fit's fallback)."""
        x, y = _measurements(sizes, values)
        return cls("monotone", tuple(map(float, x)), tuple(map(float, _isotonic(y))))

    @property
    def last_measured(self) -> float | None:
        """The largest measured α, beyond which the curve is an extrapolation (None for a known curve)."""
        return self.sizes[-1] if self.sizes else None

    def predict(self, alpha: ArrayLike) -> CurveEstimate:
        """The curve and its band at α (a number or an array of numbers ≥ 0), clipped to [ε, 1]."""
        a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
        if a.size and (not np.all(np.isfinite(a)) or a.min() < 0):
            raise ValueError(f"the number of annotated documents must be ≥ 0, got {a.tolist()}")
        if self.method == "power_law":
            assert self.params is not None
            value = self._power_law_values(a, np.array([self.params]))[0]
            if self.param_samples is not None:
                samples = self._power_law_values(a, self.param_samples)
                tail = (1 - self.level) / 2 * 100
                lower, upper = np.percentile(samples, [tail, 100 - tail], axis=0)
            elif self.sizes:
                lower, upper = self._monotone_band(a)
            else:
                lower, upper = value, value
        else:
            value = self._monotone_values(a)
            lower, upper = self._monotone_band(a)
        return CurveEstimate(value, np.minimum(lower, value), np.maximum(upper, value))

    def _power_law_values(self, alpha: np.ndarray, params: np.ndarray) -> np.ndarray:
        """Rows per parameter triple, columns per α; α = 0 reads ε (no model without data)."""
        positive = alpha > 0
        safe = np.where(positive, alpha, 1.0)
        a, b, c = (params[:, k : k + 1] for k in range(3))
        with np.errstate(over="ignore", invalid="ignore"):
            y = a - b * np.power(safe[None, :], -c)
        y = np.where(positive[None, :], y, EPSILON)
        return np.clip(np.nan_to_num(y, nan=EPSILON, neginf=EPSILON), EPSILON, 1.0)

    def _monotone_values(self, alpha: np.ndarray) -> np.ndarray:
        x = np.concatenate([[0.0], self.sizes])
        y = np.concatenate([[EPSILON], self.values])
        return np.clip(np.interp(alpha, x, y), EPSILON, 1.0)

    def _monotone_band(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(self.sizes)
        y = np.asarray(self.values)
        below = np.searchsorted(x, alpha, side="right") - 1  # last measured α ≤ alpha
        above = np.searchsorted(x, alpha, side="left")  # first measured α ≥ alpha
        lower = np.where(below >= 0, y[np.clip(below, 0, len(y) - 1)], EPSILON)
        upper = np.where(above < len(y), y[np.clip(above, 0, len(y) - 1)], 1.0)
        return np.clip(lower, EPSILON, 1.0), np.clip(upper, EPSILON, 1.0)


def _measurements(sizes: ArrayLike, values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated points, sorted by α, with the values of a repeated α averaged."""
    x = np.asarray(sizes, dtype=np.float64).ravel()
    y = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("a learning curve needs at least one measured point, got none")
    if x.size != y.size:
        raise ValueError(f"a learning curve needs one value per size, got {x.size} sizes and {y.size} values")
    if not np.all(np.isfinite(x)) or x.min() <= 0:
        raise ValueError(f"measured numbers of annotated documents must be > 0, got {x.tolist()}")
    if not np.all(np.isfinite(y)) or y.min() < 0 or y.max() > 1:
        raise ValueError(f"measured precision or recall must lie in [0, 1], got {y.tolist()}")
    unique, inverse = np.unique(x, return_inverse=True)
    means = np.bincount(inverse, weights=y) / np.bincount(inverse)
    return unique, means


def fit_learning_curve(
    sizes: ArrayLike,
    values: ArrayLike,
    *,
    level: float = 0.95,
    n_samples: int = 1000,
    rng: np.random.Generator | None = None,
) -> LearningCurve:
    """Fit precision or recall against the number of annotated documents.

    ``sizes`` are the α_k (> 0) and ``values`` the measured P_k or R_k (in [0, 1]). ``level`` is the
    coverage of the band, drawn from ``n_samples`` parameter samples with ``rng`` (seed 0 by default, so
    that a plan is reproducible). See the module's decisions for the model and its fallback.
    """
    if not 0 < level < 1:
        raise ValueError(f"the band's level must lie strictly between 0 and 1, got {level}")
    if n_samples < 2:
        raise ValueError(f"the band needs at least 2 parameter samples, got {n_samples}")
    monotone = LearningCurve.interpolated(sizes, values)
    # Every measurement counts in the fit, repeated sizes included; the monotone curve averages them.
    fitted = (
        _fit_power_law(np.asarray(sizes, dtype=np.float64).ravel(), np.asarray(values, dtype=np.float64).ravel())
        if len(monotone.sizes) >= 3
        else None
    )
    if fitted is None:
        return LearningCurve("monotone", monotone.sizes, monotone.values, level=level)
    params, covariance = fitted
    samples = None
    if covariance is not None:
        generator = rng if rng is not None else np.random.default_rng(0)
        drawn = generator.multivariate_normal(params, covariance, size=n_samples, method="eigh")
        samples = np.column_stack(
            [np.clip(drawn[:, 0], 0, 1), np.clip(drawn[:, 1], 0, None), np.clip(drawn[:, 2], *_C_BOUNDS)]
        )
    # The monotone points are kept for the band used when the covariance is unavailable.
    a, b, c = (float(p) for p in params)
    return LearningCurve("power_law", monotone.sizes, monotone.values, (a, b, c), level, samples)


def _fit_power_law(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The least-squares (a, b, c) over a few starting exponents and its covariance (None if not finite)."""
    from scipy.optimize import OptimizeWarning, curve_fit  # here: the web processes import the planner's forms

    best: tuple[float, np.ndarray, np.ndarray] | None = None
    a0 = min(max(float(y.max()) + 0.01, 0.01), 0.999)
    for c0 in _START_EXPONENTS:
        b0 = max((a0 - float(y[np.argmin(x)])) * float(x.min()) ** c0, 1e-6)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OptimizeWarning)
                params, covariance = curve_fit(
                    _power_law,
                    x,
                    y,
                    p0=(a0, b0, c0),
                    bounds=((0.0, 0.0, _C_BOUNDS[0]), (1.0, np.inf, _C_BOUNDS[1])),
                    maxfev=20_000,
                )
        except (RuntimeError, ValueError):
            continue
        if not np.all(np.isfinite(params)):
            continue
        sse = float(np.sum((_power_law(x, *params) - y) ** 2))
        if best is None or sse < best[0]:
            best = (sse, params, covariance)
    if best is None:
        return None
    _, params, covariance = best
    return params, (covariance if np.all(np.isfinite(covariance)) else None)


# --------------------------------------------------------------------------------------------------
# Payoffs


def _check_release(phi_per_document: float, documents_shared: float) -> None:
    if not (math.isfinite(phi_per_document) and phi_per_document >= 0):
        raise ValueError(f"PHI instances per document must be a finite number ≥ 0, got {phi_per_document!r}")
    if not (math.isfinite(documents_shared) and documents_shared >= 0):
        raise ValueError(f"the number of shared documents must be ≥ 0, got {documents_shared!r}")


def _check_precision(who: str, precision: float) -> None:
    if not (math.isfinite(precision) and 0 < precision <= 1):
        raise ValueError(f"{who} precision must lie in (0, 1], got {precision!r}")


def _check_recall(who: str, recall: float) -> None:
    if not (math.isfinite(recall) and 0 <= recall <= 1):
        raise ValueError(f"{who} recall must lie in [0, 1], got {recall!r}")


def attacker_gain(
    *,
    gamma: float,
    phi_per_document: float,
    documents_shared: float,
    publisher_recall: float,
    attacker_precision: float,
    attacker_recall: float,
    attacker: AttackerParameters,
) -> float:
    """−γ·c_a + i·β·(1 − R_p)·R_a·(v − l_a·(1/P_a − 1)): the attacker's payoff minus B_a.

    Raises ValueError when γ is negative, exceeds the shared documents or costs more than B_a.
    """
    _check_release(phi_per_document, documents_shared)
    _check_recall("publisher", publisher_recall)
    _check_precision("attacker", attacker_precision)
    _check_recall("attacker", attacker_recall)
    if not (math.isfinite(gamma) and gamma >= 0):
        raise ValueError(f"the attacker's number of annotated documents must be ≥ 0, got {gamma!r}")
    if gamma > documents_shared:
        raise ValueError(f"the attacker can annotate only shared documents: γ={gamma} > β={documents_shared}")
    if gamma * attacker.cost_per_document > attacker.budget * (1 + 1e-12):
        raise ValueError(
            f"γ={gamma} documents at {attacker.cost_per_document} each exceed the attacker's budget "
            f"{attacker.budget}"
        )
    leaked = phi_per_document * documents_shared * (1 - publisher_recall)
    per_found = attacker.value_per_identifier - attacker.fine_per_false_claim * (1 / attacker_precision - 1)
    return -gamma * attacker.cost_per_document + leaked * attacker_recall * per_found


def attacker_payoff(
    *,
    gamma: float,
    phi_per_document: float,
    documents_shared: float,
    publisher_recall: float,
    attacker_precision: float,
    attacker_recall: float,
    attacker: AttackerParameters,
) -> float:
    """B_a − γ·c_a + i·β·(1 − R_p)·R_a·(v − l_a·(1/P_a − 1)), the attacker's payoff when it attacks."""
    return attacker.budget + attacker_gain(
        gamma=gamma,
        phi_per_document=phi_per_document,
        documents_shared=documents_shared,
        publisher_recall=publisher_recall,
        attacker_precision=attacker_precision,
        attacker_recall=attacker_recall,
        attacker=attacker,
    )


@dataclass(frozen=True)
class AttackerResponse:
    """The attacker's best response to a release.

    ``best_*`` describe the best affordable attack (γ ≥ 1), all None when it cannot afford one
    (γ_max = 0); ``attacks`` is whether that attack's gain is strictly positive; ``payoff`` is B_a plus
    the gain when it attacks, B_a otherwise.
    """

    attacks: bool
    payoff: float
    best_documents: int | None
    best_precision: float | None
    best_recall: float | None
    best_gain: float | None

    @property
    def gain(self) -> float:
        """The gain actually taken: the best attack's when it attacks, 0 otherwise."""
        return self.best_gain if self.attacks and self.best_gain is not None else 0.0


def _gamma_grid(documents_shared: float, attacker: AttackerParameters) -> np.ndarray:
    """The affordable attacks γ = 1..γ_max (integers; geometric spacing past 200 values)."""
    gamma_max = math.floor(documents_shared)
    if attacker.cost_per_document > 0:
        gamma_max = min(gamma_max, math.floor(attacker.budget / attacker.cost_per_document + 1e-9))
    if gamma_max < 1:
        return np.zeros(0, dtype=np.int64)
    if gamma_max <= _MAX_GAMMA_POINTS:
        return np.arange(1, gamma_max + 1, dtype=np.int64)
    return np.unique(np.round(np.geomspace(1, gamma_max, _MAX_GAMMA_POINTS)).astype(np.int64))


def _best_response_on_grid(
    gammas: np.ndarray,
    precisions: np.ndarray,
    recalls: np.ndarray,
    *,
    phi_per_document: float,
    documents_shared: float,
    publisher_recall: float,
    attacker: AttackerParameters,
) -> AttackerResponse:
    if gammas.size == 0:
        return AttackerResponse(False, attacker.budget, None, None, None, None)
    leaked = phi_per_document * documents_shared * (1 - publisher_recall)
    per_found = attacker.value_per_identifier - attacker.fine_per_false_claim * (1 / precisions - 1)
    costs = gammas * attacker.cost_per_document
    returns = leaked * recalls * per_found
    gains = returns - costs
    k = int(np.argmax(gains))  # the first maximum: the cheapest of equally good attacks
    gain = float(gains[k])
    # A gain that is zero up to rounding is a tie, and a tie leaves the attacker deterred.
    attacks = gain > _TIE_TOLERANCE * max(1.0, float(costs[k]) + abs(float(returns[k])))
    return AttackerResponse(
        attacks=attacks,
        payoff=attacker.budget + (gain if attacks else 0.0),
        best_documents=int(gammas[k]),
        best_precision=float(precisions[k]),
        best_recall=float(recalls[k]),
        best_gain=gain,
    )


def attacker_best_response(
    *,
    phi_per_document: float,
    documents_shared: float,
    publisher_recall: float,
    attacker_precision: LearningCurve,
    attacker_recall: LearningCurve,
    attacker: AttackerParameters,
) -> AttackerResponse:
    """The γ ∈ 1..min(β, ⌊B_a/c_a⌋) with the largest gain, and whether that gain makes attacking pay."""
    _check_release(phi_per_document, documents_shared)
    _check_recall("publisher", publisher_recall)
    gammas = _gamma_grid(documents_shared, attacker)
    return _best_response_on_grid(
        gammas,
        attacker_precision.predict(gammas).value,
        attacker_recall.predict(gammas).value,
        phi_per_document=phi_per_document,
        documents_shared=documents_shared,
        publisher_recall=publisher_recall,
        attacker=attacker,
    )


def publisher_payoff(
    policy: Policy | str,
    *,
    alpha: float,
    phi_per_document: float,
    documents_shared: float,
    publisher_precision: float,
    publisher_recall: float,
    attacker_precision: float | None,
    attacker_recall: float | None,
    publisher: PublisherParameters,
    attacker: AttackerParameters,
) -> float:
    """The publisher's payoff under ``policy`` (ALGORITHMS.md §7).

    ``attacker_precision`` and ``attacker_recall`` are the attacker's at its best response, both None
    when it does not attack (then it leaks nothing and pays no fines). With O = i·β·R_p·(1/P_p − 1)·l_p
    (over-redaction), L = i·β·(1 − R_p)·R_a·v (leaks) and F = i·β·(1 − R_p)·R_a·(1/P_a − 1)·l_a
    (fines): Traditional −O − L; Safe-forward B_p − α·c_p − O when no attack, else 0; Attack-forward
    B_p − α·c_p − O − L; Attack-back B_p − α·c_p − O − L + F.
    """
    policy = Policy(policy)
    _check_release(phi_per_document, documents_shared)
    _check_precision("publisher", publisher_precision)
    _check_recall("publisher", publisher_recall)
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"the number of annotated documents must be ≥ 0, got {alpha!r}")
    if (attacker_precision is None) != (attacker_recall is None):
        raise ValueError("give both the attacker's precision and recall (it attacks) or neither (it does not)")

    documents_phi = phi_per_document * documents_shared
    over_redaction = (
        documents_phi * publisher_recall * (1 / publisher_precision - 1) * publisher.fine_per_false_claim
    )
    attacks = attacker_precision is not None and attacker_recall is not None
    found = fines = 0.0  # a deterred attacker claims nothing
    if attacker_precision is not None and attacker_recall is not None:
        _check_precision("attacker", attacker_precision)
        _check_recall("attacker", attacker_recall)
        found = documents_phi * (1 - publisher_recall) * attacker_recall
        fines = found * (1 / attacker_precision - 1) * attacker.fine_per_false_claim
    leak = found * attacker.value_per_identifier
    left = publisher.budget - alpha * publisher.cost_per_document

    if policy is Policy.TRADITIONAL:
        return -over_redaction - leak
    if policy is Policy.SAFE_FORWARD:
        return 0.0 if attacks else left - over_redaction
    if policy is Policy.ATTACK_FORWARD:
        return left - over_redaction - leak
    return left - over_redaction - leak + fines


# --------------------------------------------------------------------------------------------------
# The plan


@dataclass(frozen=True)
class PolicyOutcome:
    """One policy over the α grid, and its best α (None when the policy shares at no α)."""

    policy: Policy
    description: str
    publisher_payoffs: list[float]
    attacker_payoffs: list[float]
    shares: list[bool]
    best_alpha: int | None
    best_payoff: float
    should_share: bool
    advice: str


@dataclass(frozen=True)
class ReleasePlan:
    """Everything the planner page shows: lists per α of the grid, outcomes per policy, a recommendation."""

    alphas: list[int]
    precision: list[float]
    precision_lower: list[float]
    precision_upper: list[float]
    recall: list[float]
    recall_lower: list[float]
    recall_upper: list[float]
    attacker_attacks: list[bool]
    attacker_documents: list[int | None]
    attacker_gains: list[float | None]
    outcomes: dict[str, PolicyOutcome]
    recommendation: str

    def as_dict(self) -> dict[str, Any]:
        """Plain lists, dicts, numbers and strings, ready for JSON or a template."""
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "outcomes"}
        data["outcomes"] = {
            key: {f.name: getattr(o, f.name) for f in fields(o)} | {"policy": o.policy.value}
            for key, o in self.outcomes.items()
        }
        return data


def _alpha_grid(current: int, maximum: int, points: int) -> np.ndarray:
    if maximum - current + 1 <= points:
        return np.arange(current, maximum + 1, dtype=np.int64)
    return np.unique(np.round(np.linspace(current, maximum, points)).astype(np.int64))


def _money(amount: float) -> str:
    return f"{amount:,.2f}"


def _documents(count: int) -> str:
    return f"{count} document" if count == 1 else f"{count} documents"


def plan(
    *,
    precision_curve: LearningCurve,
    recall_curve: LearningCurve,
    annotated_documents: int,
    phi_per_document: float,
    documents_shared: int,
    publisher: PublisherParameters | None = None,
    attacker: AttackerParameters | None = None,
    attacker_precision_curve: LearningCurve | None = None,
    attacker_recall_curve: LearningCurve | None = None,
    max_documents: int | None = None,
    grid_points: int = 50,
) -> ReleasePlan:
    """Play the game at every α of the grid and recommend a release.

    α runs from ``annotated_documents`` to ⌊B_p / c_p⌋, capped by ``max_documents`` (the documents that
    exist to annotate; required when c_p is 0), every integer up to ``grid_points`` values, else
    ``grid_points`` evenly spaced ones. The attacker learns along the publisher's curves unless its own
    are given; defaults are :data:`PUBLISHER_DEFAULTS` and :data:`ATTACKER_DEFAULTS`.
    """
    publisher = publisher if publisher is not None else PublisherParameters()
    attacker = attacker if attacker is not None else AttackerParameters()
    _check_release(phi_per_document, documents_shared)
    if int(documents_shared) != documents_shared or documents_shared < 1:
        raise ValueError(f"the number of shared documents must be a whole number ≥ 1, got {documents_shared!r}")
    if int(annotated_documents) != annotated_documents or annotated_documents < 0:
        raise ValueError(f"the number of annotated documents must be a whole number ≥ 0, got {annotated_documents!r}")
    if grid_points < 2:
        raise ValueError(f"the α grid needs at least 2 points, got {grid_points}")
    if max_documents is not None and max_documents < annotated_documents:
        raise ValueError(
            f"max_documents ({max_documents}) is below the {annotated_documents} documents already annotated"
        )
    if publisher.cost_per_document > 0:
        alpha_max = math.floor(publisher.budget / publisher.cost_per_document + 1e-9)
        if max_documents is not None:
            alpha_max = min(alpha_max, max_documents)
    elif max_documents is not None:
        alpha_max = max_documents
    else:
        raise ValueError("annotation costs nothing (c_p = 0): give max_documents, the documents there are to annotate")
    if alpha_max < annotated_documents:
        raise ValueError(
            f"the publisher's budget {_money(publisher.budget)} pays for {alpha_max} annotated documents at "
            f"{_money(publisher.cost_per_document)} each, but {annotated_documents} are annotated already: "
            "raise the budget or lower the cost per document"
        )

    alphas = _alpha_grid(int(annotated_documents), alpha_max, grid_points)
    precision = precision_curve.predict(alphas)
    recall = recall_curve.predict(alphas)
    gammas = _gamma_grid(documents_shared, attacker)
    attacker_p = (attacker_precision_curve or precision_curve).predict(gammas).value
    attacker_r = (attacker_recall_curve or recall_curve).predict(gammas).value

    responses = [
        _best_response_on_grid(
            gammas,
            attacker_p,
            attacker_r,
            phi_per_document=phi_per_document,
            documents_shared=documents_shared,
            publisher_recall=float(r),
            attacker=attacker,
        )
        for r in recall.value
    ]
    payoffs: dict[Policy, list[float]] = {policy: [] for policy in Policy}
    for alpha, p, r, response in zip(alphas, precision.value, recall.value, responses):
        for policy in Policy:
            payoffs[policy].append(
                publisher_payoff(
                    policy,
                    alpha=float(alpha),
                    phi_per_document=phi_per_document,
                    documents_shared=documents_shared,
                    publisher_precision=float(p),
                    publisher_recall=float(r),
                    attacker_precision=response.best_precision if response.attacks else None,
                    attacker_recall=response.best_recall if response.attacks else None,
                    publisher=publisher,
                    attacker=attacker,
                )
            )

    alpha_list = [int(a) for a in alphas]
    outcomes = {
        policy.value: _outcome(policy, alpha_list, payoffs[policy], responses, attacker) for policy in Policy
    }
    recommendation = _recommend(
        outcomes,
        alpha_list,
        precision,
        recall,
        responses,
        annotated_documents=int(annotated_documents),
        documents_shared=int(documents_shared),
        curves=(precision_curve, recall_curve),
    )
    return ReleasePlan(
        alphas=alpha_list,
        precision=precision.value.tolist(),
        precision_lower=precision.lower.tolist(),
        precision_upper=precision.upper.tolist(),
        recall=recall.value.tolist(),
        recall_lower=recall.lower.tolist(),
        recall_upper=recall.upper.tolist(),
        attacker_attacks=[r.attacks for r in responses],
        attacker_documents=[r.best_documents for r in responses],
        attacker_gains=[r.best_gain for r in responses],
        outcomes=outcomes,
        recommendation=recommendation,
    )


def _outcome(
    policy: Policy,
    alphas: list[int],
    payoffs: list[float],
    responses: list[AttackerResponse],
    attacker: AttackerParameters,
) -> PolicyOutcome:
    if policy is Policy.SAFE_FORWARD:
        shares = [not r.attacks for r in responses]
        attacker_payoffs = [attacker.budget] * len(alphas)  # deterred, or nothing to attack
    else:
        shares = [True] * len(alphas)
        attacker_payoffs = [r.payoff for r in responses]
    candidates = [k for k, s in enumerate(shares) if s]
    if policy is Policy.TRADITIONAL:
        best = len(alphas) - 1  # it spends the whole budget
    elif candidates:
        top = max(payoffs[k] for k in candidates)
        # The smallest α whose payoff equals the best up to rounding: the cheaper of equal releases.
        best = next(k for k in candidates if payoffs[k] >= top - _TIE_TOLERANCE * max(1.0, abs(top)))
    else:
        best = None

    if best is None:
        advice = "Never shares: the attacker gains from attacking at every affordable α."
        return PolicyOutcome(
            policy, POLICY_DESCRIPTIONS[policy], payoffs, attacker_payoffs, shares, None, 0.0, False, advice
        )
    payoff = payoffs[best]
    response = responses[best]
    attack = (
        f"the attacker attacks, annotating {_documents(response.best_documents or 0)} "
        f"(gain {_money(response.gain)})"
        if response.attacks
        else "the attacker is deterred"
    )
    if policy is Policy.TRADITIONAL:
        should_share = True
        loss = " (a loss, but this policy must publish)" if payoff < 0 else ""
        advice = f"Spends the budget on α = {alphas[best]}: payoff {_money(payoff)}{loss}; {attack}."
    else:
        should_share = payoff > 0
        verdict = "share" if should_share else "do not share (not sharing is worth 0)"
        advice = f"Best at α = {alphas[best]}: payoff {_money(payoff)}, {attack}; {verdict}."
    return PolicyOutcome(
        policy,
        POLICY_DESCRIPTIONS[policy],
        payoffs,
        attacker_payoffs,
        shares,
        alphas[best],
        payoff,
        should_share,
        advice,
    )


def _recommend(
    outcomes: dict[str, PolicyOutcome],
    alphas: list[int],
    precision: CurveEstimate,
    recall: CurveEstimate,
    responses: list[AttackerResponse],
    *,
    annotated_documents: int,
    documents_shared: int,
    curves: tuple[LearningCurve, LearningCurve],
) -> str:
    """Plain-language advice, led by Safe-forward: share only what deters the attacker and pays."""
    safe = outcomes[Policy.SAFE_FORWARD.value]
    forward = outcomes[Policy.ATTACK_FORWARD.value]
    back = outcomes[Policy.ATTACK_BACK.value]
    sentences: list[str] = []
    if safe.best_alpha is not None and safe.should_share:
        k = alphas.index(safe.best_alpha)
        more = safe.best_alpha - annotated_documents
        gain = responses[k].best_gain
        if gain is None:
            deterrence = "an attacker cannot afford to annotate a single document"
        elif gain < 0:
            deterrence = f"an attacker's best attack would lose {_money(-gain)}"
        else:
            deterrence = "an attacker's best attack would at most break even"
        sentences.append(
            f"Share the {_documents(documents_shared)} after annotating {_documents(safe.best_alpha)} in total "
            f"({more} more): the model should reach precision {precision.value[k]:.2f} and recall "
            f"{recall.value[k]:.2f}, at which {deterrence}, so it is deterred; the expected payoff is "
            f"{_money(safe.best_payoff)}."
        )
        k_focus = k
    elif safe.best_alpha is None:
        gains = [(r.best_gain, a) for r, a in zip(responses, alphas) if r.best_gain is not None]
        least, at = min(gains)
        sentences.append(
            f"Do not share: at every affordable amount of annotation ({alphas[0]}–{alphas[-1]} documents) the "
            f"attacker gains from attacking (at least {_money(least)}, at α = {at})."
        )
        if forward.best_alpha is not None:
            outcome = "would still pay" if forward.should_share else "would lose money"
            sentences.append(
                f"Sharing anyway (Attack-forward) {outcome}: at best {_money(forward.best_payoff)} at "
                f"α = {forward.best_alpha}."
            )
        k_focus = alphas.index(forward.best_alpha) if forward.best_alpha is not None else len(alphas) - 1
    else:
        first = next(a for a, r in zip(alphas, responses) if not r.attacks)
        sentences.append(
            f"Do not share: the attacker is deterred from α = {first} on, but annotation and over-redaction "
            f"cost more than the budget brings (best payoff {_money(safe.best_payoff)} at α = {safe.best_alpha})."
        )
        k_focus = alphas.index(safe.best_alpha)

    if (
        back.best_alpha is not None
        and back.should_share
        and responses[alphas.index(back.best_alpha)].attacks
        and back.best_payoff > forward.best_payoff
    ):
        sentences.append(
            f"If the attacker's fines were paid to you (Attack-back), the best release (α = {back.best_alpha}, "
            f"payoff {_money(back.best_payoff)}) would invite an attack: a perverse incentive, not a plan."
        )

    alpha_focus = alphas[k_focus]
    extrapolated = [
        name
        for name, curve in zip(("precision", "recall"), curves)
        if curve.last_measured is not None and alpha_focus > curve.last_measured
    ]
    if extrapolated:
        sentences.append(
            f"These figures extrapolate the learning curve beyond the documents measured: at α = {alpha_focus} "
            f"precision may lie between {precision.lower[k_focus]:.2f} and {precision.upper[k_focus]:.2f} and "
            f"recall between {recall.lower[k_focus]:.2f} and {recall.upper[k_focus]:.2f}."
        )
    return " ".join(sentences)
