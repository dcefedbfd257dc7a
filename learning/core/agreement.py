"""Agreement between annotators who marked the same records independently (double annotation).

Four figures, each overall and per PHI label, for one record or for many:

- **strict span F1**: over every pair of annotators of a record, the spans of one that the other marked with
  the same start, end and label (a multiset intersection, as :func:`learning.core.metrics.entity_level`
  counts it). Summed over the pairs, ``2·matched / (spans of the first + spans of the second)`` — the F1 of
  one annotator against the other, which does not depend on which is taken as the reference.
- **relaxed span F1**: the same with "overlaps a span of the same label" for "equal": the share of the spans
  of both annotators of each pair that overlap a span of the other with the same label. A span may partner
  several (one long span against two short ones counts all three as matched), as lenient scorers do.
- **Cohen's κ** on tokens (:func:`corpus.text.tokenize`; a token takes the label of the span covering it,
  as :func:`learning.core.metrics.token_types` assigns it, or none): per pair of annotators over the tokens
  of the records both marked, from scikit-learn's ``cohen_kappa_score``; with more than one pair, the mean of
  the pairs weighted by their tokens (Light's κ). Per label, the tokens are "this label or not".
- **Krippendorff's α** on tokens (nominal), any number of annotators, an annotator who did not mark a record
  counting as missing there — from the ``krippendorff`` package.

A figure that is undefined is ``None``: F1 when nobody marked a span (of that label), κ when both annotators
gave every token the same value (chance agreement is 1), α when the data hold a single value. Such a record
is in full agreement; :func:`agreement` says so with ``unanimous``.

Library choice. κ and α come from scikit-learn and ``krippendorff`` (both checked against hand-worked values
in the tests); span matching is counted here, because span F1 on character offsets with exact and overlap
matching is a few lines over ``Counter`` and neither library has it.
"""
from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Mapping, Sequence

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from corpus.text import Token, tokenize
from corpus.types import Span
from learning.core.metrics import token_types

__all__ = ["RecordSubmissions", "agreement", "span_matches"]


@dataclass(frozen=True)
class RecordSubmissions:
    """One record's text and every annotator's spans on it (annotator name → spans)."""

    text: str
    spans: Mapping[str, Sequence[Span]]
    tokens: Sequence[Token] | None = None  # the record's tokens, when the caller has them


@dataclass
class _Tally:
    """Matched and total spans of the pairs, for strict and relaxed F1."""

    strict: int = 0
    relaxed: int = 0
    total: int = 0

    def figures(self) -> dict[str, float | None]:
        if not self.total:
            return {"strict_f1": None, "relaxed_f1": None}
        return {"strict_f1": self.strict / self.total, "relaxed_f1": self.relaxed / self.total}


def span_matches(first: Sequence[Span], second: Sequence[Span]) -> tuple[int, int]:
    """(strict, relaxed) matched spans of two annotators' spans, counted on both sides: ``2·|first ∩ second|``
    for strict, and for relaxed the spans of either that overlap a span of the other with the same label."""
    strict = 2 * sum((Counter(first) & Counter(second)).values())
    relaxed = sum(_overlaps_same_label(span, second) for span in first)
    relaxed += sum(_overlaps_same_label(span, first) for span in second)
    return strict, relaxed


def _overlaps_same_label(span: Span, others: Sequence[Span]) -> bool:
    return any(o.label == span.label and o.start < span.end and span.start < o.end for o in others)


def _kappa(first: np.ndarray, second: np.ndarray) -> float | None:
    if len(first) == 0 or (np.array_equal(first, second) and len(np.unique(first)) == 1):
        return None  # one value everywhere for both: chance agreement is 1, κ is 0/0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohen_kappa_score(first, second)
    return None if np.isnan(value) else float(value)


def _alpha(matrix: np.ndarray) -> float | None:
    values = matrix[~np.isnan(matrix)]
    if matrix.shape[0] < 2 or len(np.unique(values)) < 2:
        return None
    # units that only one annotator coded carry no pairable value; the package needs at least one pairable unit
    if not np.any(np.sum(~np.isnan(matrix), axis=0) >= 2):
        return None
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))


def agreement(records: Sequence[RecordSubmissions], *, labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Agreement over ``records`` (each with two or more annotators; records with fewer are skipped).

    ``labels``: the labels reported on (default: every label some annotator used). Returns ``records``,
    ``annotators`` (sorted), ``tokens`` (counted once per record), ``unanimous`` (records on which every pair
    marked exactly the same spans), ``overall`` and ``per_label`` (label → the same four figures plus
    ``spans``, how many spans of that label the annotators marked in all).
    """
    records = [r for r in records if len(r.spans) >= 2]
    annotators = sorted({name for r in records for name in r.spans})
    used = sorted({s.label for r in records for spans in r.spans.values() for s in spans})
    labels = list(labels) if labels is not None else used
    column = {name: i for i, name in enumerate(annotators)}
    label_code = {label: i + 1 for i, label in enumerate(sorted(set(labels) | set(used)))}

    overall, per_label = _Tally(), {label: _Tally() for label in labels}
    span_counts = Counter(s.label for r in records for spans in r.spans.values() for s in spans)
    pair_codes: dict[tuple[str, str], tuple[list[np.ndarray], list[np.ndarray]]] = {}
    columns: list[np.ndarray] = []  # per record: annotators × tokens, NaN where an annotator did not mark it
    unanimous = n_tokens = 0
    for record in records:
        tokens = record.tokens if record.tokens is not None else tokenize(record.text)
        n_tokens += len(tokens)
        codes = {name: np.array([label_code[t] if t else 0 for t in token_types(tokens, spans)], dtype=np.int64)
                 for name, spans in record.spans.items()}
        block = np.full((len(annotators), len(tokens)), np.nan)
        for name, row in codes.items():
            block[column[name]] = row
        columns.append(block)
        same = True
        for a, b in combinations(sorted(record.spans), 2):
            first, second = record.spans[a], record.spans[b]
            strict, relaxed = span_matches(first, second)
            overall.strict += strict
            overall.relaxed += relaxed
            overall.total += len(first) + len(second)
            same = same and strict == len(first) + len(second)
            for label, tally in per_label.items():
                of_first = [s for s in first if s.label == label]
                of_second = [s for s in second if s.label == label]
                if of_first or of_second:
                    strict, relaxed = span_matches(of_first, of_second)
                    tally.strict += strict
                    tally.relaxed += relaxed
                    tally.total += len(of_first) + len(of_second)
            firsts, seconds = pair_codes.setdefault((a, b), ([], []))
            firsts.append(codes[a])
            seconds.append(codes[b])
        unanimous += same

    matrix = np.concatenate(columns, axis=1) if columns else np.empty((len(annotators), 0))
    pairs = {pair: (np.concatenate(a), np.concatenate(b)) for pair, (a, b) in pair_codes.items()}

    def figures(tally: _Tally, code: int | None) -> dict[str, Any]:
        def view(values: np.ndarray) -> np.ndarray:
            return values if code is None else (values == code).astype(np.int64)

        kappas = [(len(a), _kappa(view(a), view(b))) for a, b in pairs.values()]
        weighted = [(n, k) for n, k in kappas if k is not None]
        kappa = (sum(n * k for n, k in weighted) / sum(n for n, _ in weighted)) if weighted else None
        alpha_data = matrix if code is None else np.where(np.isnan(matrix), np.nan, matrix == code)
        return {**tally.figures(), "kappa": kappa, "alpha": _alpha(alpha_data)}

    return {
        "records": len(records), "annotators": annotators, "tokens": n_tokens, "unanimous": unanimous,
        "overall": {**figures(overall, None), "spans": sum(span_counts.values())},
        "per_label": {label: {**figures(per_label[label], label_code[label]), "spans": span_counts[label]}
                      for label in labels},
    }
