"""Recall bias: trading precision for recall with marginal thresholds (ALGORITHMS.md §3).

A token whose most probable label is O, but with P(O | x) < τ_main, is relabelled to its most probable PHI
label when that label's marginal is ≥ τ_alt. (τ_main, τ_alt) is chosen on a development set by grid
search, maximising token-level binary F_β.

Decisions:

- The thresholds are tuned on the token-wise decisions (``learning.core.decoding.decode_tokenwise``), the
  unit of §3's F_β. What is shown and scored — :func:`recall_biased_tags`, :func:`recall_biased_spans`,
  the pre-annotations — is the BIO-consistent decoding of ``learning.core.decoding.decode`` with the same
  thresholds: every token they relabel is still shown as PHI, the same as token-wise wherever the
  token-wise labels form a valid sequence, and an entity is not cut into pieces where they do not.
- The search covers the grid of §3 and four more τ_main values between its 0.999 and 0.99 (165 pairs;
  ``SECTION_3_TAU_MAIN`` is §3's alone). For β ≥ 4 on clinical text the best pair lies in that gap: on
  MEDDOCAN (``bench/leakage.py``) §3's grid jumps from token precision 0.92 at τ_main 0.99 to 0.78 at 0.999.
  What annotators are shown leaked 0.62 % at precision 0.908 with §3's F_4 pair, and the same at 0.917 with
  this grid's; F_6 reaches 0.53 % at 0.906 here and stays at 0.62 % on §3's grid. Every pair of §3 is
  still searched. There is no separate "no bias" cell (pairs that
  relabel nothing play that part). Equal F_β is resolved towards the milder change: the pair that relabels
  fewest development tokens, then the lowest τ_main, then the highest τ_alt, because pairs that tie on the
  development set relabel fewer unseen tokens when they are milder.

Per-label thresholds (:func:`tune_recall_bias_per_label`): one (τ_main, τ_alt) per PHI type, applied by the
same decoder (``learning.core.decoding``: a token is judged by the pair of its most probable PHI type, the
type it would be relabelled to). Decisions:

- A type's pair is chosen by the same grid search and tie-break, maximising the binary token F_β of the
  tokens whose most probable PHI type is that type (its *candidates*: the tokens predicted as that type and
  the O tokens it is the runner-up of). Those sets cut the tokens into disjoint parts whose counts add up to
  the overall ones, and a type's pair changes only its own part, so each type's search is exact and
  independent; the gold PHI of a part are mostly, not only, gold tokens of that type (a missed CALLE token
  whose runner-up is TERRITORIO counts for TERRITORIO, where its relabelling would happen).
- ``beta`` is one β for every type or a β per type (a type whose leak costs more gets a larger β). A type
  the mapping leaves out is not tuned and keeps the model's own labels: the decoder never relabels a type
  its thresholds do not name.
- A type with fewer than ``min_support`` gold PHI tokens among its candidates keeps the pair tuned over all
  tokens (with its β): a grid of 165 pairs tuned on a handful of tokens picks noise.
- With ``objective="overall"`` the pairs are instead chosen together to maximise the overall binary F_β
  (coordinate ascent over the types from the single pair, until no type's change raises it). Per-type F_β
  sets each type's bar by its own score — a type the model finds easily gets a stricter bar than one pair
  would give it, a hard type a laxer one — which is not what the overall figure rewards. On MEDDOCAN
  (``bench/leakage.py``) neither variant leaks less than one pair at the same precision: most of what one
  pair still leaks has too little PHI probability for any pair of the grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from corpus.bio import OUTSIDE, label_of
from corpus.text import Token
from corpus.types import Span
from learning.core.decoding import (
    RecallBiasThresholds, decode_tokenwise, decoded_spans, decoded_tags, outside_index, phi_candidates,
)
from learning.core.metrics import f_beta

__all__ = [
    "BETAS",
    "SECTION_3_TAU_MAIN",
    "TAU_ALT_GRID",
    "TAU_MAIN_GRID",
    "LabelRecallBias",
    "PerLabelRecallBias",
    "RecallBias",
    "apply_recall_bias",
    "recall_biased_spans",
    "recall_biased_tags",
    "stored_thresholds",
    "tune_recall_bias",
    "tune_recall_bias_per_label",
]

SECTION_3_TAU_MAIN = (0.99999, 0.9999, 0.999, 0.99, 0.95, 0.90, 0.85, 0.80, 0.75, 0.7, 0.6)
TAU_MAIN_GRID = (0.99999, 0.9999, 0.999, 0.998, 0.996, 0.994, 0.992, 0.99, 0.95, 0.90, 0.85, 0.80, 0.75, 0.7, 0.6)
TAU_ALT_GRID = (0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4)
BETAS = (1, 4, 10, 20, 40)


class RecallBias(NamedTuple):
    """The chosen thresholds and the development F_β they reach."""

    tau_main: float
    tau_alt: float
    score: float

    @property
    def thresholds(self) -> tuple[float, float]:
        """``(τ_main, τ_alt)``, what ``learning.core.decoding`` takes as ``recall_bias``."""
        return self.tau_main, self.tau_alt

    def to_json(self) -> dict:
        return {"tau_main": self.tau_main, "tau_alt": self.tau_alt, "f_beta": self.score}


class LabelRecallBias(NamedTuple):
    """One PHI type's thresholds and what they reach on its candidate tokens of the tuning documents."""

    tau_main: float
    tau_alt: float
    score: float  # F_β of the type's candidate tokens (binary)
    precision: float
    recall: float
    gold_tokens: int  # gold PHI tokens among the candidates
    predicted_tokens: int  # candidates shown as PHI with these thresholds
    tuned: bool  # False: too little support, the pair tuned over all tokens is kept


@dataclass(frozen=True)
class PerLabelRecallBias:
    """Thresholds per PHI type, and the overall binary F_β they reach on the tuning documents."""

    by_type: Mapping[str, LabelRecallBias]  # the types tuned (with a β per type: those it names)
    beta: float | Mapping[str, float]
    score: float  # overall binary F_β with these thresholds (with a β per type: the largest)
    precision: float
    recall: float

    @property
    def thresholds(self) -> dict[str, tuple[float, float]]:
        """``{type: (τ_main, τ_alt)}``, what ``learning.core.decoding`` takes as ``recall_bias``."""
        return {kind: (t.tau_main, t.tau_alt) for kind, t in self.by_type.items()}

    def to_json(self) -> dict:
        """What :func:`stored_thresholds` reads back, with the β of each type and what each type reached."""
        betas = self.beta if isinstance(self.beta, Mapping) else dict.fromkeys(self.by_type, self.beta)
        return {
            "betas": {kind: float(betas[kind]) for kind in self.by_type},
            "thresholds": {kind: [t.tau_main, t.tau_alt] for kind, t in self.by_type.items()},
            "f_beta": self.score, "precision": self.precision, "recall": self.recall,
            "by_type": {kind: t._asdict() for kind, t in self.by_type.items()},
        }


def stored_thresholds(stored: Mapping | None) -> RecallBiasThresholds | None:
    """The thresholds of a recall bias stored as JSON (the ``to_json`` of :class:`RecallBias` or
    :class:`PerLabelRecallBias`, with anything else beside): one pair, a pair per type, or None for none."""
    if not stored:
        return None
    if "thresholds" in stored:
        return {str(kind): (float(pair[0]), float(pair[1])) for kind, pair in stored["thresholds"].items()}
    if "tau_main" in stored and "tau_alt" in stored:
        return float(stored["tau_main"]), float(stored["tau_alt"])
    return None


def apply_recall_bias(
    marginals: np.ndarray, labels: Sequence[str], tau_main: float, tau_alt: float
) -> np.ndarray:
    """Label indices (into ``labels``) per token after the recall bias, decided token by token."""
    return decode_tokenwise(marginals, labels, (tau_main, tau_alt))


def recall_biased_tags(
    marginals: np.ndarray, labels: Sequence[str], tau_main: float, tau_alt: float
) -> list[str]:
    """BIO tags per token after the recall bias, as one valid BIO sequence."""
    return decoded_tags(marginals, labels, (tau_main, tau_alt))


def recall_biased_spans(
    tokens: Sequence[Token],
    marginals: np.ndarray,
    labels: Sequence[str],
    tau_main: float,
    tau_alt: float,
) -> list[Span]:
    """Character spans of one document decoded from its marginals with the recall bias (what annotators are
    shown as suggestions)."""
    return decoded_spans(tokens, marginals, labels, (tau_main, tau_alt))


def _tuning_arrays(marginals_per_doc, gold_tags_per_doc, labels):
    """All tuning tokens at once: marginals (tokens, labels) and the gold-PHI mask, lengths checked."""
    if len(marginals_per_doc) != len(gold_tags_per_doc):
        raise ValueError(f"{len(marginals_per_doc)} marginal arrays but {len(gold_tags_per_doc)} tag lists")
    arrays = [np.asarray(m, dtype=np.float64).reshape(-1, len(labels)) for m in marginals_per_doc]
    for i, (m, tags) in enumerate(zip(arrays, gold_tags_per_doc)):
        if m.shape[0] != len(tags):
            raise ValueError(f"document {i}: {m.shape[0]} marginal rows but {len(tags)} gold tags")
    m = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, len(labels)))
    gold_phi = np.array([t != OUTSIDE for tags in gold_tags_per_doc for t in tags], dtype=bool)
    return m, gold_phi


def tune_recall_bias(
    marginals_per_doc: Sequence[np.ndarray],
    gold_tags_per_doc: Sequence[Sequence[str]],
    labels: Sequence[str],
    beta: float,
    *,
    tau_main_grid: Sequence[float] = TAU_MAIN_GRID,
) -> RecallBias:
    """Grid-search (τ_main, τ_alt) maximising token-level binary F_β on development documents.

    ``gold_tags_per_doc[i]`` are the BIO tags of the tokens of document i (anything but ``"O"`` is PHI);
    ``tau_main_grid`` is the τ_main values searched (``SECTION_3_TAU_MAIN``: §3's alone).
    """
    o = outside_index(labels)
    m, gold_phi = _tuning_arrays(marginals_per_doc, gold_tags_per_doc, labels)
    argmax, p_o, best_phi = phi_candidates(m, o)
    p_best_phi = m[np.arange(m.shape[0]), best_phi] if len(labels) > 1 else np.zeros(m.shape[0])
    predicted_o = argmax == o
    base_phi = ~predicted_o
    n_gold = int(gold_phi.sum())

    best: tuple[float, int, float, float] | None = None
    chosen = RecallBias(tau_main_grid[-1], TAU_ALT_GRID[-1], 0.0)
    for tau_main in tau_main_grid:
        unsure_o = predicted_o & (p_o < tau_main)
        for tau_alt in TAU_ALT_GRID:
            relabel = unsure_o & (p_best_phi >= tau_alt)
            pred_phi = base_phi | relabel
            tp = int((pred_phi & gold_phi).sum())
            n_pred = int(pred_phi.sum())
            p = tp / n_pred if n_pred else 0.0
            r = tp / n_gold if n_gold else 0.0
            score = f_beta(p, r, beta)
            key = (score, -int(relabel.sum()), -tau_main, tau_alt)
            if best is None or key > best:
                best = key
                chosen = RecallBias(tau_main, tau_alt, score)
    return chosen


_OBJECTIVES = ("per_label", "overall")


def _prf_beta(tp, n_pred, n_gold, beta):
    p = np.divide(tp, n_pred, out=np.zeros(np.shape(tp)), where=np.asarray(n_pred) > 0)
    r = np.divide(tp, n_gold, out=np.zeros(np.shape(tp)), where=np.asarray(n_gold) > 0)
    b2 = beta * beta
    denominator = b2 * p + r
    f = np.divide((1 + b2) * p * r, denominator, out=np.zeros(np.shape(tp)), where=denominator > 0)
    return f, p, r


def tune_recall_bias_per_label(
    marginals_per_doc: Sequence[np.ndarray],
    gold_tags_per_doc: Sequence[Sequence[str]],
    labels: Sequence[str],
    beta: float | Mapping[str, float],
    *,
    min_support: int = 20,
    objective: str = "per_label",
) -> PerLabelRecallBias:
    """Grid-search one (τ_main, τ_alt) per PHI type of ``labels`` (see the module's docstring).

    ``beta`` is one β, and every PHI type of ``labels`` gets a pair, or ``{type: β}``, and the types it names
    get one (the others keep the model's labels; names that are not types of ``labels`` are ignored).
    """
    if objective not in _OBJECTIVES:
        raise ValueError(f"the objective is one of {_OBJECTIVES}, not {objective!r}")
    types = sorted({label_of(label) for label in labels if label != OUTSIDE})
    if isinstance(beta, Mapping):
        if objective == "overall":
            raise ValueError("the overall objective takes one β, not one per type")
        beta_of = {t: float(beta[t]) for t in types if t in beta}
        if types and not beta_of:
            raise ValueError(f"the β per type names none of the PHI types {', '.join(types)}")
    else:
        beta_of = {t: float(beta) for t in types}
    o = outside_index(labels)
    m, gold_phi = _tuning_arrays(marginals_per_doc, gold_tags_per_doc, labels)

    if not types:
        raise ValueError(f"the label set has no PHI label: {list(labels)}")
    argmax, p_o, best_phi = phi_candidates(m, o)
    column_type = np.array([types.index(label_of(label)) if label != OUTSIDE else -1 for label in labels])
    part = column_type[best_phi]  # every token's candidate type (that of its most probable PHI label)
    p_best_phi = m[np.arange(m.shape[0]), best_phi]
    predicted_o = argmax == o
    n_types = len(types)
    base_pred = np.bincount(part[~predicted_o], minlength=n_types)
    base_tp = np.bincount(part[~predicted_o & gold_phi], minlength=n_types)
    gold = np.bincount(part[gold_phi], minlength=n_types)

    # relabelled[k, X] and relabelled_tp[k, X]: tokens of type X's part the k-th grid pair relabels.
    pairs = [(tm, ta) for tm in TAU_MAIN_GRID for ta in TAU_ALT_GRID]
    relabelled = np.zeros((len(pairs), n_types), dtype=np.int64)
    relabelled_tp = np.zeros((len(pairs), n_types), dtype=np.int64)
    for k, (tau_main, tau_alt) in enumerate(pairs):
        relabel = predicted_o & (p_o < tau_main) & (p_best_phi >= tau_alt)
        relabelled[k] = np.bincount(part[relabel], minlength=n_types)
        relabelled_tp[k] = np.bincount(part[relabel & gold_phi], minlength=n_types)
    tp = base_tp[None, :] + relabelled_tp
    pred = base_pred[None, :] + relabelled
    n_gold = int(gold.sum())
    tau_mains = np.array([tm for tm, _ in pairs])
    tau_alts = np.array([ta for _, ta in pairs])

    def best_pair(scores: np.ndarray, relabels: np.ndarray) -> int:
        # The tie-break of tune_recall_bias: highest score, fewest relabelled, lowest τ_main, highest τ_alt.
        return int(np.lexsort((tau_alts, -tau_mains, -relabels, scores))[-1])

    single: dict[float, int] = {}  # per β, the one pair tuned over all tokens (the fallback)
    for b in set(beta_of.values()):
        scores = _prf_beta(tp.sum(axis=1), pred.sum(axis=1), n_gold, b)[0]
        single[b] = best_pair(scores, relabelled.sum(axis=1))

    unchanged = len(pairs)  # the row of a type left out of a β per type: nothing relabelled
    chosen = np.full(n_types, unchanged, dtype=np.int64)
    supported = gold >= min_support
    for x, kind in enumerate(types):
        if kind not in beta_of:
            continue
        if supported[x] and objective == "per_label":
            chosen[x] = best_pair(_prf_beta(tp[:, x], pred[:, x], gold[x], beta_of[kind])[0], relabelled[:, x])
        else:
            chosen[x] = single[beta_of[kind]]
    if objective == "overall":
        _coordinate_ascent(chosen, supported, tp, pred, relabelled, n_gold, beta_of[types[0]], best_pair)

    tp, pred = np.vstack([tp, base_tp]), np.vstack([pred, base_pred])
    columns = np.arange(n_types)
    part_f, part_p, part_r = _prf_beta(
        tp[chosen, columns], pred[chosen, columns], gold, np.array([beta_of.get(t, 1.0) for t in types]))
    per_label = {
        kind: LabelRecallBias(
            tau_main=pairs[chosen[x]][0], tau_alt=pairs[chosen[x]][1], score=float(part_f[x]),
            precision=float(part_p[x]), recall=float(part_r[x]), gold_tokens=int(gold[x]),
            predicted_tokens=int(pred[chosen[x], x]), tuned=bool(supported[x]),
        )
        for x, kind in enumerate(types) if kind in beta_of
    }
    total_f, total_p, total_r = _prf_beta(
        tp[chosen, columns].sum(), pred[chosen, columns].sum(), n_gold, max(beta_of.values()))
    return PerLabelRecallBias(by_type=per_label, beta=dict(beta_of) if isinstance(beta, Mapping) else float(beta),
                              score=float(total_f), precision=float(total_p), recall=float(total_r))


def _coordinate_ascent(chosen, supported, tp, pred, relabelled, n_gold, beta, best_pair) -> None:
    """Change one supported type's pair at a time to the one that most raises the overall F_β, until none
    does (in place). Each step can only raise the score, and the grid is finite, so it ends."""
    columns = np.arange(chosen.shape[0])
    while True:
        changed = False
        for x in np.flatnonzero(supported).tolist():
            others_tp = tp[chosen, columns].sum() - tp[chosen[x], x]
            others_pred = pred[chosen, columns].sum() - pred[chosen[x], x]
            scores = _prf_beta(others_tp + tp[:, x], others_pred + pred[:, x], n_gold, beta)[0]
            k = best_pair(scores, relabelled[:, x])
            if scores[k] > scores[chosen[x]] + 1e-12:
                chosen[x] = k
                changed = True
        if not changed:
            return
