"""Recall bias: trading precision for recall with marginal thresholds (ALGORITHMS.md §3).

A token whose most probable label is O, but with P(O | x) < τ_main, is relabelled to its most probable PHI
label when that label's marginal is ≥ τ_alt. (τ_main, τ_alt) is chosen on a development set by grid
search, maximising token-level binary F_β.

Decisions:

- Relabelling works on posterior (per-token argmax) decoding of the marginals. A relabelled ``I-X`` whose
  left neighbour is not ``B-X`` or ``I-X`` becomes ``B-X``, so every relabelled token starts or continues
  a well-formed span; the model's choice between starting a new span and continuing one is kept otherwise.
- The search covers exactly the grid of §3 (121 pairs); there is no separate "no bias" cell (pairs that
  relabel nothing play that part). Equal F_β is resolved towards the milder change: the pair that relabels
  fewest development tokens, then the lowest τ_main, then the highest τ_alt, because pairs that tie on the
  development set relabel fewer unseen tokens when they are milder.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from corpus.bio import OUTSIDE, bio_to_spans
from learning.core.metrics import f_beta
from corpus.text import Token
from corpus.types import Span

__all__ = [
    "BETAS",
    "TAU_ALT_GRID",
    "TAU_MAIN_GRID",
    "RecallBias",
    "apply_recall_bias",
    "recall_biased_spans",
    "recall_biased_tags",
    "tune_recall_bias",
]

TAU_MAIN_GRID = (0.99999, 0.9999, 0.999, 0.99, 0.95, 0.90, 0.85, 0.80, 0.75, 0.7, 0.6)
TAU_ALT_GRID = (0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4)
BETAS = (1, 4, 10, 20, 40)


class RecallBias(NamedTuple):
    """The chosen thresholds and the development F_β they reach."""

    tau_main: float
    tau_alt: float
    score: float


def _o_index(labels: Sequence[str]) -> int:
    try:
        return list(labels).index(OUTSIDE)
    except ValueError:
        raise ValueError(f"the label set has no {OUTSIDE!r}: {list(labels)}") from None


def _phi_candidates(marginals: np.ndarray, o_index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token: the argmax label, P(O) and the index of the most probable PHI label."""
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"marginals must be a (tokens, labels) array, got shape {m.shape}")
    argmax = m.argmax(axis=1) if m.shape[0] else np.zeros(0, dtype=np.int64)
    masked = m.copy()
    masked[:, o_index] = -np.inf
    best_phi = masked.argmax(axis=1) if m.shape[0] else np.zeros(0, dtype=np.int64)
    return argmax, m[:, o_index], best_phi


def apply_recall_bias(
    marginals: np.ndarray, labels: Sequence[str], tau_main: float, tau_alt: float
) -> np.ndarray:
    """Label indices (into ``labels``) per token after the recall bias."""
    o = _o_index(labels)
    m = np.asarray(marginals, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] != len(labels):
        raise ValueError(f"marginals of shape {m.shape} do not match {len(labels)} labels")
    argmax, p_o, best_phi = _phi_candidates(m, o)
    if len(labels) < 2:
        return argmax
    rows = np.arange(m.shape[0])
    relabel = (argmax == o) & (p_o < tau_main) & (m[rows, best_phi] >= tau_alt)
    out = argmax.copy()
    out[relabel] = best_phi[relabel]
    index = {label: i for i, label in enumerate(labels)}
    for t in np.flatnonzero(relabel):
        label = labels[out[t]]
        if not label.startswith("I-"):
            continue
        kind = label[2:]
        previous = labels[out[t - 1]] if t > 0 else OUTSIDE
        if previous not in (f"B-{kind}", f"I-{kind}") and f"B-{kind}" in index:
            out[t] = index[f"B-{kind}"]
    return out


def recall_biased_tags(
    marginals: np.ndarray, labels: Sequence[str], tau_main: float, tau_alt: float
) -> list[str]:
    """BIO tags per token after the recall bias."""
    return [labels[i] for i in apply_recall_bias(marginals, labels, tau_main, tau_alt)]


def recall_biased_spans(
    tokens: Sequence[Token],
    marginals: np.ndarray,
    labels: Sequence[str],
    tau_main: float,
    tau_alt: float,
) -> list[Span]:
    """Character spans of one document decoded from its marginals with the recall bias."""
    if len(tokens) != np.asarray(marginals).shape[0]:
        raise ValueError(f"{len(tokens)} tokens but marginals for {np.asarray(marginals).shape[0]}")
    return bio_to_spans(tokens, recall_biased_tags(marginals, labels, tau_main, tau_alt))


def tune_recall_bias(
    marginals_per_doc: Sequence[np.ndarray],
    gold_tags_per_doc: Sequence[Sequence[str]],
    labels: Sequence[str],
    beta: float,
) -> RecallBias:
    """Grid-search (τ_main, τ_alt) maximising token-level binary F_β on development documents.

    ``gold_tags_per_doc[i]`` are the BIO tags of the tokens of document i (anything but ``"O"`` is PHI).
    """
    if len(marginals_per_doc) != len(gold_tags_per_doc):
        raise ValueError(f"{len(marginals_per_doc)} marginal arrays but {len(gold_tags_per_doc)} tag lists")
    o = _o_index(labels)
    arrays = [np.asarray(m, dtype=np.float64).reshape(-1, len(labels)) for m in marginals_per_doc]
    for i, (m, tags) in enumerate(zip(arrays, gold_tags_per_doc)):
        if m.shape[0] != len(tags):
            raise ValueError(f"document {i}: {m.shape[0]} marginal rows but {len(tags)} gold tags")
    m = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, len(labels)))
    gold_phi = np.array([t != OUTSIDE for tags in gold_tags_per_doc for t in tags], dtype=bool)
    argmax, p_o, best_phi = _phi_candidates(m, o)
    p_best_phi = m[np.arange(m.shape[0]), best_phi] if len(labels) > 1 else np.zeros(m.shape[0])
    predicted_o = argmax == o
    base_phi = ~predicted_o
    n_gold = int(gold_phi.sum())

    best: tuple[float, int, float, float] | None = None
    chosen = RecallBias(TAU_MAIN_GRID[-1], TAU_ALT_GRID[-1], 0.0)
    for tau_main in TAU_MAIN_GRID:
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
