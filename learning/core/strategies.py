"""Query strategies for pool-based active learning (ALGORITHMS.md §1), one document at a time.

Every strategy is a pure, vectorised function of one document's marginals: an array of shape
(tokens, labels) whose rows sum to 1, plus the column index of ``"O"``. The document score Q(d) is a sum
(or, for LC-mean, a mean) of per-token values; :func:`learning.core.ordering.select` turns the scores of a pool into a batch.

Conventions chosen here:

- LC, LCUB, entropy and ELB read the full label distribution: ŷ_t is the argmax over all labels (B-/I- of
  every type and O) and the entropy runs over all labels with the natural log, as ALGORITHMS.md defines.
- ROI reads the binary view. Under the P′ ≈ P approximation both ROI formulas reduce to
  (NC_FN + NC_FP) · P · (1 − P) − c_t, and P · (1 − P) is the same whichever binary class is predicted,
  so the token value is (NC_FN + NC_FP) · p_phi · (1 − p_phi) − c_t with p_phi = 1 − P(O). NC_FN and NC_FP
  are kept separate so fitted costs can be passed as measured, even though only their sum matters here.
- A document without tokens scores ``-inf`` (:data:`EMPTY_SCORE`) for every strategy except Random: 0 would
  beat every document whose ROI is negative, and an empty document has nothing to teach, so it must never
  win. ``ordering.select`` ranks it last, and only returns it when the batch asks for more documents than the
  rest of the pool holds.
- Random scores every document 0, so ``ordering.select``, which breaks ties uniformly at random, draws a
  uniform random batch; the live loop draws one score per document instead (``ordering.random_scores``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from learning.core.params import Param, defaults

__all__ = [
    "EMPTY_SCORE",
    "PRESETS",
    "Strategy",
    "UnknownStrategyError",
    "available_strategies",
    "elb",
    "entropy",
    "get_strategy",
    "lc_mean",
    "lc_sum",
    "lcub",
    "parse_strategy",
    "roi",
    "strategy_defaults",
    "strategy_parameters",
    "token_elb",
    "token_entropy",
    "token_lcub",
    "token_least_confidence",
    "token_roi",
]

EMPTY_SCORE = float("-inf")


class UnknownStrategyError(ValueError):
    """A strategy name or parameter that does not exist."""


# --------------------------------------------------------------------------------------------------
# Per-token quantities


def _check(marginals: np.ndarray) -> np.ndarray:
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"marginals must be a (tokens, labels) array, got shape {m.shape}")
    return m


def token_least_confidence(marginals: np.ndarray) -> np.ndarray:
    """u(x_t) = 1 − P(ŷ_t | x_t) per token."""
    m = _check(marginals)
    if m.shape[0] == 0:
        return np.zeros(0)
    return 1.0 - m.max(axis=1)


def token_entropy(marginals: np.ndarray) -> np.ndarray:
    """H(x_t) = −Σ_y P(y | x_t) ln P(y | x_t) per token (0 · ln 0 = 0)."""
    m = _check(marginals)
    # −p ln p where p > 0, and 0 where p = 0 (as scipy.special.entr, without importing scipy in the web)
    return -(m * np.log(np.where(m > 0, m, 1.0))).sum(axis=1)


def token_lcub(marginals: np.ndarray, theta: float) -> np.ndarray:
    """[P(ŷ_t | x_t) < θ] · (1 − P(ŷ_t | x_t)) per token."""
    m = _check(marginals)
    if m.shape[0] == 0:
        return np.zeros(0)
    top = m.max(axis=1)
    return np.where(top < theta, 1.0 - top, 0.0)


def token_elb(marginals: np.ndarray, rho: float) -> np.ndarray:
    """[H(x_t) > ρ] · H(x_t) per token."""
    h = token_entropy(marginals)
    return np.where(h > rho, h, 0.0)


def token_roi(marginals: np.ndarray, o_index: int, nc_fn: float, nc_fp: float, c_t: float) -> np.ndarray:
    """ROI(x_t) = (NC_FN + NC_FP) · P · (1 − P) − c_t per token, with P from the binary view."""
    m = _check(marginals)
    p_phi = 1.0 - m[:, o_index]
    return (nc_fn + nc_fp) * p_phi * (1.0 - p_phi) - c_t


# --------------------------------------------------------------------------------------------------
# Document scores


def lc_sum(marginals: np.ndarray, o_index: int | None = None) -> float:
    """Σ_t (1 − P(ŷ_t | x_t))."""
    u = token_least_confidence(marginals)
    return float(u.sum()) if u.size else EMPTY_SCORE


def lc_mean(marginals: np.ndarray, o_index: int | None = None) -> float:
    """Σ_t (1 − P(ŷ_t | x_t)) / l."""
    u = token_least_confidence(marginals)
    return float(u.mean()) if u.size else EMPTY_SCORE


def lcub(marginals: np.ndarray, o_index: int | None = None, *, theta: float) -> float:
    """Σ_t [P(ŷ_t | x_t) < θ] · (1 − P(ŷ_t | x_t))."""
    u = token_lcub(marginals, theta)
    return float(u.sum()) if u.size else EMPTY_SCORE


def entropy(marginals: np.ndarray, o_index: int | None = None) -> float:
    """Σ_t H(x_t)."""
    h = token_entropy(marginals)
    return float(h.sum()) if h.size else EMPTY_SCORE


def elb(marginals: np.ndarray, o_index: int | None = None, *, rho: float) -> float:
    """Σ_t [H(x_t) > ρ] · H(x_t)."""
    h = token_elb(marginals, rho)
    return float(h.sum()) if h.size else EMPTY_SCORE


def roi(marginals: np.ndarray, o_index: int, *, nc_fn: float, nc_fp: float, c_t: float) -> float:
    """Σ_t ROI(x_t); see :func:`token_roi`."""
    r = token_roi(marginals, o_index, nc_fn, nc_fp, c_t)
    return float(r.sum()) if r.size else EMPTY_SCORE


def _random(marginals: np.ndarray, o_index: int | None = None) -> float:
    _check(marginals)
    return 0.0


# The parameters of the kinds (ALGORITHMS.md §1); the defaults are the values that did best in the studies.
_THETA = Param("theta", float, 0.6, "only tokens whose most likely label is below θ count (best: 0.6 on trial "
               "records, 0.4 on i2b2)", minimum=0.0, maximum=1.0, title="θ (theta)")
_RHO = Param("rho", float, 0.1, "only tokens whose entropy is above ρ count (best: 0.1 on trial records, 1 on "
             "i2b2)", minimum=0.0, maximum=10.0, title="ρ (rho)")
_NC_FN = Param("nc_fn", float, 0.1, "net value of correcting a missed PHI token", minimum=0.0, maximum=100.0,
               title="NC_FN")
_NC_FP = Param("nc_fp", float, 0.1, "net value of correcting a token wrongly suggested as PHI",
               minimum=0.0, maximum=100.0, title="NC_FP")
_C_T = Param("c_t", float, 0.01, "cost of reading one token", minimum=0.0, maximum=100.0, title="c_t")

# Per kind: the document-score function and its parameters (all required).
_KINDS: dict[str, tuple[Callable[..., float], tuple[Param, ...]]] = {
    "random": (_random, ()),
    "lc-sum": (lc_sum, ()),
    "lc-mean": (lc_mean, ()),
    "lcub": (lcub, (_THETA,)),
    "entropy": (entropy, ()),
    "elb": (elb, (_RHO,)),
    "roi": (roi, (_NC_FN, _NC_FP, _C_T)),
}


def _token_values(kind: str, m: np.ndarray, o_index: int, params: Mapping[str, float]) -> np.ndarray:
    """Per-token contributions whose per-document sum (or mean) is the score of ``kind``."""
    if kind in ("lc-sum", "lc-mean"):
        return token_least_confidence(m)
    if kind == "lcub":
        return token_lcub(m, params["theta"])
    if kind == "entropy":
        return token_entropy(m)
    if kind == "elb":
        return token_elb(m, params["rho"])
    if kind == "roi":
        return token_roi(m, o_index, params["nc_fn"], params["nc_fp"], params["c_t"])
    raise AssertionError(kind)


@dataclass(frozen=True)
class Strategy:
    """A named query strategy: its ``kind`` (one of the functions above) and its parameters."""

    name: str
    kind: str
    params: Mapping[str, float] = field(default_factory=dict)

    def score(self, marginals: np.ndarray, o_index: int) -> float:
        """Q(d) of one document."""
        function = _KINDS[self.kind][0]
        return function(marginals, o_index, **self.params)

    def score_many(self, marginals: Sequence[np.ndarray], o_index: int) -> np.ndarray:
        """Q(d) of every document, in one vectorised pass over all their tokens."""
        n_docs = len(marginals)
        if n_docs == 0:
            return np.zeros(0)
        arrays = [_check(m) for m in marginals]
        lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        if self.kind == "random":
            return np.zeros(n_docs)
        scores = np.full(n_docs, EMPTY_SCORE)
        nonempty = lengths > 0
        if not nonempty.any():
            return scores
        stacked = np.concatenate([a for a in arrays if a.shape[0]], axis=0)
        values = _token_values(self.kind, stacked, o_index, self.params)
        kept = lengths[nonempty]
        offsets = np.concatenate(([0], np.cumsum(kept)[:-1]))
        sums = np.add.reduceat(values, offsets)
        if self.kind == "lc-mean":
            sums = sums / kept
        scores[nonempty] = sums
        return scores

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "params": dict(self.params)}


def _presets() -> dict[str, Strategy]:
    presets = {
        "random": Strategy("random", "random"),
        "lc-sum": Strategy("lc-sum", "lc-sum"),
        "lc-mean": Strategy("lc-mean", "lc-mean"),
        "entropy": Strategy("entropy", "entropy"),
    }
    for i in range(1, 11):
        presets[f"LCUB_{i}"] = Strategy(f"LCUB_{i}", "lcub", {"theta": round(0.1 * i, 1)})
    for i, rho in enumerate((0.0, 1.0, 0.1, 0.01, 0.001), start=1):
        presets[f"ELB_{i}"] = Strategy(f"ELB_{i}", "elb", {"rho": rho})
    for i, (nc, c_t) in enumerate(((0.1, 0.0), (0.1, 0.01), (0.5, 0.01)), start=1):
        presets[f"ROI_{i}"] = Strategy(f"ROI_{i}", "roi", {"nc_fn": nc, "nc_fp": nc, "c_t": c_t})
    return presets


PRESETS: Mapping[str, Strategy] = _presets()


def available_strategies() -> list[str]:
    """Every name :func:`get_strategy` accepts: the presets, then the parameterised kinds."""
    return list(PRESETS) + [k for k in ("lcub", "elb", "roi") if k not in PRESETS]


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def get_strategy(name: str, **overrides: float) -> Strategy:
    """The strategy called ``name`` (a preset or a kind), with ``overrides`` replacing its parameters.

    Names are case-insensitive and ``_``/``-`` are interchangeable (``"LCUB_6"``, ``"lcub-6"``,
    ``"lc_sum"``). The parameterised kinds ``lcub``, ``elb`` and ``roi`` need their parameters, e.g.
    ``get_strategy("roi", nc_fn=0.2, nc_fp=0.1, c_t=0.004)`` for measured costs.
    """
    strategy = _named(name)
    missing = [p.name for p in _KINDS[strategy.kind][1] if p.name not in strategy.params and p.name not in overrides]
    if missing:
        raise UnknownStrategyError(f"strategy {name!r} needs parameter(s): {', '.join(missing)}")
    allowed = [p.name for p in _KINDS[strategy.kind][1]]
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        raise UnknownStrategyError(
            f"strategy {name!r} takes no parameter(s) {', '.join(unknown)}; it takes: "
            f"{', '.join(allowed) or 'none'}"
        )
    params = dict(strategy.params)
    params.update({k: float(v) for k, v in overrides.items()})
    if params == dict(strategy.params):
        return strategy
    # A preset with changed parameters is no longer that preset: name it by kind and values.
    shown = ", ".join(f"{k}={v:g}" for k, v in params.items())
    return replace(strategy, name=f"{strategy.kind}({shown})", params=params)


def _named(name: str) -> Strategy:
    """The preset called ``name``, or a kind without its parameters."""
    key = _normalise(name)
    by_key = {_normalise(n): s for n, s in PRESETS.items()}
    if key in by_key:
        return by_key[key]
    if key in _KINDS:
        return Strategy(key, key, {})
    raise UnknownStrategyError(f"unknown query strategy {name!r}; choose one of: {', '.join(available_strategies())}")


def strategy_parameters(name: str) -> tuple[Param, ...]:
    """The parameters of the strategy called ``name`` (a preset or a kind), with their ranges."""
    return _KINDS[_named(name).kind][1]


def strategy_defaults(name: str) -> dict[str, float]:
    """The values of :func:`strategy_parameters` unless a lead says otherwise: a preset's own, else the values
    that did best in the studies."""
    strategy = _named(name)
    return {**defaults(_KINDS[strategy.kind][1]), **strategy.params}


def parse_strategy(spec: str) -> Strategy:
    """A strategy from text such as ``"LCUB_6"`` or ``"roi:nc_fn=0.2,nc_fp=0.1,c_t=0.004"``."""
    name, _, rest = spec.partition(":")
    overrides: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        try:
            if not eq:
                raise ValueError
            overrides[key.strip()] = float(value)
        except ValueError:
            raise UnknownStrategyError(
                f"cannot read {item!r} in strategy {spec!r}; write parameters as name=number, e.g. theta=0.6"
            ) from None
    return get_strategy(name, **overrides)
