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
- The search covers exactly the grid of §3 (121 pairs); there is no separate "no bias" cell (pairs that
  relabel nothing play that part). Equal F_β is resolved towards the milder change: the pair that relabels
  fewest development tokens, then the lowest τ_main, then the highest τ_alt, because pairs that tie on the
  development set relabel fewer unseen tokens when they are milder.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from corpus.bio import OUTSIDE
from corpus.text import Token
from corpus.types import Span
from learning.core.decoding import decode_tokenwise, decoded_spans, decoded_tags, outside_index, phi_candidates
from learning.core.metrics import f_beta

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
    o = outside_index(labels)
    arrays = [np.asarray(m, dtype=np.float64).reshape(-1, len(labels)) for m in marginals_per_doc]
    for i, (m, tags) in enumerate(zip(arrays, gold_tags_per_doc)):
        if m.shape[0] != len(tags):
            raise ValueError(f"document {i}: {m.shape[0]} marginal rows but {len(tags)} gold tags")
    m = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, len(labels)))
    gold_phi = np.array([t != OUTSIDE for tags in gold_tags_per_doc for t in tags], dtype=bool)
    argmax, p_o, best_phi = phi_candidates(m, o)
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
