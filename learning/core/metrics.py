"""Evaluation of PHI taggers (ALGORITHMS.md §5).

Micro-averaged precision, recall and F1 at two levels:

- **entity**: a predicted span counts when its start, end and type equal a gold span's (``entity``), or its
  start and end alone (``entity_binary``: PHI vs not, type ignored). Per type, with the gold count as
  support.
- **token**: each token of :func:`corpus.text.tokenize` takes the type of the span that covers it
  (through :func:`corpus.bio.spans_to_bio`). ``token`` is binary (PHI vs not), ``token_type`` needs the
  same type. Leakage is the share of gold PHI tokens predicted non-PHI.

Undefined ratios (no prediction, no gold) are 0, as in scikit-learn with ``zero_division=0``.

Library choice. Exact entity matching on character offsets is a multiset intersection of
``(start, end, label)`` per document, counted here with :class:`collections.Counter`. seqeval scores BIO
token sequences, so a gold span that does not start or end on a token boundary would be judged by its
token approximation instead of its characters. nervaluate does take character spans, but its matcher
reads ``end`` as inclusive (two adjacent spans ``[0, 5)`` and ``[5, 9)`` overlap for it) and lets a
partly overlapping prediction consume a gold span, after which an exact prediction of that span counts
as spurious; it also runs its four scenarios for every type on every call. Its ``strict`` and ``exact``
scenarios agree with the counts here when ends are made inclusive and predictions do not overlap, which
the tests check. McNemar's test with Yates' correction is a chi-square statistic with one degree of freedom,
whose p-value is ``erfc(sqrt(x / 2))``: computed with :func:`math.erfc` rather than imported from statsmodels,
whose import (scipy.stats, pandas) costs a worker process that starts about half a second of its first retrain;
the tests check it against statsmodels.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

import numpy as np

from corpus.bio import label_of, spans_to_bio, token_runs
from corpus.text import Token, tokenize
from corpus.types import Document, Span

__all__ = [
    "evaluate",
    "f_beta",
    "leakage_by_type",
    "mcnemar_tokens",
    "prf",
    "token_codes",
    "token_types",
    "token_level",
    "entity_level",
]


def f_beta(p: float, r: float, beta: float = 1.0) -> float:
    """F_β = (1 + β²) · P · R / (β² · P + R); 0 when P and R are both 0."""
    b2 = beta * beta
    denominator = b2 * p + r
    if denominator <= 0:
        return 0.0
    return (1.0 + b2) * p * r / denominator


def prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    """Precision, recall and F1 from counts."""
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"p": p, "r": r, "f1": f_beta(p, r, 1.0)}


def _check_lengths(gold_docs: Sequence[Document], predicted_spans: Sequence[Sequence[Span]]) -> None:
    if len(gold_docs) != len(predicted_spans):
        raise ValueError(f"{len(gold_docs)} gold documents but {len(predicted_spans)} predictions")


# --------------------------------------------------------------------------------------------------
# Entity level


def entity_level(
    gold_docs: Sequence[Document], predicted_spans: Sequence[Sequence[Span]]
) -> dict[str, Any]:
    """Exact-match entity scores: overall with type, overall without type, and per type."""
    _check_lengths(gold_docs, predicted_spans)
    tp = tp_bin = n_gold = n_pred = 0
    tp_by: Counter[str] = Counter()
    gold_by: Counter[str] = Counter()
    pred_by: Counter[str] = Counter()
    for doc, pred in zip(gold_docs, predicted_spans):
        gold_c = Counter((s.start, s.end, s.label) for s in doc.spans)
        pred_c = Counter((s.start, s.end, s.label) for s in pred)
        hits = gold_c & pred_c
        tp += sum(hits.values())
        n_gold += sum(gold_c.values())
        n_pred += sum(pred_c.values())
        gold_where = Counter((s.start, s.end) for s in doc.spans)
        pred_where = Counter((s.start, s.end) for s in pred)
        tp_bin += sum((gold_where & pred_where).values())
        for (_, _, label), n in hits.items():
            tp_by[label] += n
        for (_, _, label), n in gold_c.items():
            gold_by[label] += n
        for (_, _, label), n in pred_c.items():
            pred_by[label] += n
    per_type = {}
    for label in sorted(set(gold_by) | set(pred_by)):
        scores = prf(tp_by[label], pred_by[label], gold_by[label])
        scores["support"] = gold_by[label]
        per_type[label] = scores
    return {
        "entity": prf(tp, n_pred, n_gold),
        "entity_binary": prf(tp_bin, n_pred, n_gold),
        "per_type": per_type,
        "counts": {"tp": tp, "tp_binary": tp_bin, "pred": n_pred, "gold": n_gold},
    }


# --------------------------------------------------------------------------------------------------
# Token level


def token_types(tokens: Sequence[Token], spans: Sequence[Span]) -> list[str | None]:
    """The PHI type of every token (``None`` for non-PHI), as :func:`spans_to_bio` assigns it."""
    tags, _ = spans_to_bio(tokens, spans)
    return [label_of(t) for t in tags]


def token_codes(tokens: Sequence[Token], spans: Sequence[Span], codes: dict[str | None, int]) -> np.ndarray:
    """The code of every token's PHI type, as :func:`token_types` assigns the type (the runs of
    :func:`corpus.bio.token_runs`): ``codes`` maps a type to its code (``None``, non-PHI, to 0) and gets the
    code of each new type."""
    out = np.zeros(len(tokens), dtype=np.int64)
    for first, last, label in token_runs(tokens, spans)[0]:
        out[first:last] = codes.setdefault(label, len(codes))
    return out


def _tokens(gold_docs: Sequence[Document], tokens: Sequence[Sequence[Token]] | None) -> Sequence[Sequence[Token]]:
    return tokens if tokens is not None else [tokenize(doc.text) for doc in gold_docs]


def _codes(tokens: Sequence[Sequence[Token]], spans_per_doc: Sequence[Sequence[Span]],
           codes: dict[str | None, int]) -> np.ndarray:
    """The type codes of every token of every document, laid back to back (``codes`` gets the new types)."""
    parts = [token_codes(toks, spans, codes) for toks, spans in zip(tokens, spans_per_doc)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _type_arrays(
    gold_docs: Sequence[Document],
    predicted_spans: Sequence[Sequence[Span]],
    tokens: Sequence[Sequence[Token]] | None,
    codes: dict[str | None, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gold and predicted type codes of every token of every document (0 = non-PHI; ``codes`` gets the
    others)."""
    codes = {None: 0} if codes is None else codes
    tokens = _tokens(gold_docs, tokens)
    return _codes(tokens, [doc.spans for doc in gold_docs], codes), _codes(tokens, predicted_spans, codes)


def token_level(
    gold_docs: Sequence[Document],
    predicted_spans: Sequence[Sequence[Span]],
    tokens: Sequence[Sequence[Token]] | None = None,
) -> dict[str, Any]:
    """Token scores (binary and typed), leakage (overall, and the leaked tokens of each gold type) and the
    number of tokens evaluated.

    ``tokens`` (per document) may be passed to reuse a tokenization; by default each text is tokenized.
    """
    _check_lengths(gold_docs, predicted_spans)
    codes: dict[str | None, int] = {None: 0}
    gold, pred = _type_arrays(gold_docs, predicted_spans, tokens, codes)
    gold_phi = gold != 0
    pred_phi = pred != 0
    n_gold = int(gold_phi.sum())
    n_pred = int(pred_phi.sum())
    tp_bin = int((gold_phi & pred_phi).sum())
    tp_type = int((gold_phi & (gold == pred)).sum())
    leaked = n_gold - tp_bin
    return {
        "token": prf(tp_bin, n_pred, n_gold),
        "token_type": prf(tp_type, n_pred, n_gold),
        "leakage": leaked / n_gold if n_gold else 0.0,
        "leaked_by_type": _leaked_by_type(gold, pred, codes),
        "eval_tokens": int(gold.shape[0]),
        "token_counts": {"tp": tp_bin, "tp_type": tp_type, "pred": n_pred, "gold": n_gold},
    }


def _leaked_by_type(gold: np.ndarray, pred: np.ndarray, codes: dict[str | None, int]) -> dict[str, dict[str, int]]:
    """Per gold PHI type (by name): its tokens (``gold``) and those predicted non-PHI (``leaked``)."""
    kinds = {code: kind for kind, code in codes.items()}
    gold_count = np.bincount(gold, minlength=len(codes))
    leaked = np.bincount(gold[pred == 0], minlength=len(codes))
    present = [code for code in np.flatnonzero(gold_count).tolist() if code]  # code 0: non-PHI
    return {kinds[code]: {"gold": int(gold_count[code]), "leaked": int(leaked[code])}
            for code in sorted(present, key=kinds.__getitem__)}


def leakage_by_type(
    gold_docs: Sequence[Document],
    predicted_spans: Sequence[Sequence[Span]],
    tokens: Sequence[Sequence[Token]] | None = None,
) -> dict[str, dict[str, float]]:
    """Per gold PHI type: its tokens (``gold``), those predicted non-PHI (``leaked``) and their share
    (``leakage``). A token predicted as another PHI type is not leaked: it is concealed all the same."""
    leaked = token_level(gold_docs, predicted_spans, tokens)["leaked_by_type"]
    return {kind: {**counts, "leakage": counts["leaked"] / counts["gold"]} for kind, counts in leaked.items()}


def evaluate(
    gold_docs: Sequence[Document],
    predicted_spans: Sequence[Sequence[Span]],
    tokens: Sequence[Sequence[Token]] | None = None,
) -> dict[str, Any]:
    """Every score of §5 for predictions ``predicted_spans[i]`` of the text of ``gold_docs[i]``.

    Returns ``{"entity", "entity_binary", "token", "token_type": {"p", "r", "f1"}, "leakage",
    "per_type": {TYPE: {"p", "r", "f1", "support"}}, "leaked_by_type": {TYPE: {"gold", "leaked"}} (tokens),
    "eval_tokens", "counts"}``.
    """
    entity = entity_level(gold_docs, predicted_spans)
    token = token_level(gold_docs, predicted_spans, tokens)
    counts = dict(entity.pop("counts"))
    counts.update({f"token_{k}": v for k, v in token.pop("token_counts").items()})
    return {**entity, **token, "counts": counts}


# --------------------------------------------------------------------------------------------------
# Comparing two models


def mcnemar_tokens(
    gold_docs: Sequence[Document],
    predicted_a: Sequence[Sequence[Span]],
    predicted_b: Sequence[Sequence[Span]],
    tokens: Sequence[Sequence[Token]] | None = None,
) -> dict[str, float]:
    """McNemar's test (Yates' continuity correction) on the per-token correctness of two models.

    A token is correct when its predicted type equals its gold type (non-PHI included). Returns the
    statistic, the p-value and the four cells: ``both`` right, ``a_only`` right, ``b_only`` right,
    ``neither``. With no discordant token the models are indistinguishable: statistic 0, p-value 1.
    """
    _check_lengths(gold_docs, predicted_a)
    _check_lengths(gold_docs, predicted_b)
    tokens = _tokens(gold_docs, tokens)
    codes: dict[str | None, int] = {None: 0}
    gold, a = _type_arrays(gold_docs, predicted_a, tokens, codes)
    right_a, right_b = gold == a, gold == _codes(tokens, predicted_b, codes)
    both = int((right_a & right_b).sum())
    a_only = int((right_a & ~right_b).sum())
    b_only = int((~right_a & right_b).sum())
    neither = int((~right_a & ~right_b).sum())
    if a_only + b_only == 0:
        statistic, pvalue = 0.0, 1.0
    else:
        statistic = (abs(a_only - b_only) - 1) ** 2 / (a_only + b_only)
        pvalue = math.erfc(math.sqrt(statistic / 2))  # chi-square's survival function, one degree of freedom
    return {
        "statistic": statistic,
        "pvalue": pvalue,
        "both": both,
        "a_only": a_only,
        "b_only": b_only,
        "neither": neither,
    }
