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
  as :func:`learning.core.metrics.token_codes` assigns it, or none): per pair of annotators over the tokens
  of the records both marked, from scikit-learn's ``cohen_kappa_score``; with more than one pair, the mean of
  the pairs weighted by their tokens (Light's κ). Per label, the tokens are "this label or not".
- **Krippendorff's α** on tokens (nominal), any number of annotators, an annotator who did not mark a record
  counting as missing there — from the ``krippendorff`` package.

A figure that is undefined is ``None``: F1 when nobody marked a span (of that label), κ when both annotators
gave every token the same value (chance agreement is 1), α when the data hold a single value. Such a record
is in full agreement; :func:`agreement` says so with ``unanimous``.

Library choice. κ and α are computed here in closed form over numpy counts — κ from the joint distribution of
the two annotators' values, nominal α from each unit's value counts (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability", the coincidence matrix's diagonal and margins) — and checked in the tests
against hand-worked values *and* against scikit-learn's ``cohen_kappa_score`` and the ``krippendorff``
package on random data. Those libraries were the first choice and are the tests' reference, but each call
costs milliseconds (validation; a units × values × values coincidence tensor): the agreement page of 500
records × 2 annotators took 20 s through them and takes well under a second this way. Span matching is counted
here too: span F1 on character offsets with exact and overlap matching is a few lines over ``Counter``, and
neither library has it.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np

from corpus.text import Token, tokenize
from corpus.types import Span
from learning.core.metrics import token_codes

__all__ = ["RecordSubmissions", "agreement", "cohen_kappa", "nominal_alpha", "span_matches"]


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

    def add(self, first: Sequence[Span], second: Sequence[Span]) -> None:
        strict, relaxed = span_matches(first, second)
        self.strict += strict
        self.relaxed += relaxed
        self.total += len(first) + len(second)


@dataclass
class _Record:
    """What one record contributes: span tallies (overall and per label), each pair's joint counts of token
    values, and its tokens' value counts (distinct rows and how many tokens have each) for α."""

    tally: _Tally
    label_tallies: dict[str, _Tally]
    joints: dict[tuple[str, str], np.ndarray]
    patterns: np.ndarray
    weights: np.ndarray
    unanimous: bool
    tokens: int
    spans: Counter = field(default_factory=Counter)


def span_matches(first: Sequence[Span], second: Sequence[Span]) -> tuple[int, int]:
    """(strict, relaxed) matched spans of two annotators' spans, counted on both sides: ``2·|first ∩ second|``
    for strict, and for relaxed the spans of either that overlap a span of the other with the same label."""
    unique_first, unique_second = set(first), set(second)
    if len(unique_first) == len(first) and len(unique_second) == len(second):  # the usual case: no repeats
        strict = 2 * len(unique_first & unique_second)
    else:
        strict = 2 * sum((Counter(first) & Counter(second)).values())
    relaxed = sum(_overlaps_same_label(span, second) for span in first)
    relaxed += sum(_overlaps_same_label(span, first) for span in second)
    return strict, relaxed


def _overlaps_same_label(span: Span, others: Sequence[Span]) -> bool:
    return any(o.label == span.label and o.start < span.end and span.start < o.end for o in others)


def _kappa_of_joint(joint: np.ndarray) -> float | None:
    """κ from the counts of (first's value, second's value) over the units: (p_o − p_e) / (1 − p_e)."""
    n = joint.sum()
    if n == 0:
        return None
    observed = float(np.trace(joint)) / n
    expected = float(joint.sum(axis=1) @ joint.sum(axis=0)) / (n * n)
    if expected >= 1.0 - 1e-12:
        return None
    return (observed - expected) / (1.0 - expected)


def _joint(first: np.ndarray, second: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(first * size + second, minlength=size * size).reshape(size, size)


def cohen_kappa(first: np.ndarray, second: np.ndarray) -> float | None:
    """Cohen's κ of two annotators' integer values (≥ 0) on the same units: (p_o − p_e) / (1 − p_e); None when
    there are no units or chance agreement is 1 (both gave one and the same value everywhere)."""
    if len(first) == 0:
        return None
    return _kappa_of_joint(_joint(first, second, int(max(first.max(), second.max())) + 1))


def _unit_counts(matrix: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the units × values counts of the units with two values or more, and how many
    units have each (nominal α depends on a unit only through its counts). Values are ``0 … size − 1``."""
    present = ~np.isnan(matrix)
    pairable = present.sum(axis=0) >= 2
    if not pairable.any():
        return np.empty((0, size), dtype=np.int64), np.empty(0, dtype=np.int64)
    coders = matrix.shape[0]
    base = size + 1  # one more value: "missing"
    if coders * np.log2(base) < 62:
        # a unit's values as a multiset, written as one number (its sorted values as digits): unique numbers
        # are unique count rows, found by a 1-D np.unique instead of a slow row-wise one
        values = np.where(present[:, pairable], matrix[:, pairable], size).astype(np.int64)
        values.sort(axis=0)
        powers = base ** np.arange(coders, dtype=np.int64)
        keys, weights = np.unique(powers @ values, return_counts=True)
        digits = (keys[None, :] // powers[:, None]) % base
        patterns = np.zeros((len(keys), base), dtype=np.int64)
        np.add.at(patterns, (np.broadcast_to(np.arange(len(keys)), digits.shape), digits), 1)
        return patterns[:, :size], weights
    values, present = matrix[:, pairable], present[:, pairable]
    coder, unit = np.nonzero(present)
    codes = values[coder, unit].astype(np.int64)
    counts = np.bincount(unit * size + codes, minlength=values.shape[1] * size).reshape(-1, size)
    return np.unique(counts, axis=0, return_counts=True)


def _alpha_of_counts(patterns: np.ndarray, weights: np.ndarray) -> float | None:
    """Nominal α from distinct unit counts (rows: m_uc per value c) and how many units have each."""
    if len(weights) == 0:
        return None
    patterns = patterns.astype(float)
    per_unit = patterns.sum(axis=1)
    margins = weights @ patterns
    n = margins.sum()
    diagonal = float(weights @ ((patterns * (patterns - 1)).sum(axis=1) / (per_unit - 1)))
    expected = 1.0 - float((margins * (margins - 1)).sum()) / (n * (n - 1))
    if expected <= 1e-12:
        return None
    return 1.0 - (1.0 - diagonal / n) / expected


def nominal_alpha(matrix: np.ndarray) -> float | None:
    """Krippendorff's α (nominal) of an annotators × units matrix of integer values ≥ 0, NaN where missing.

    Units with fewer than two values cannot be paired and are left out. With ``m_u`` values in unit ``u`` of
    which ``m_uc`` are ``c``: the coincidences on the diagonal sum to Σ_u Σ_c m_uc(m_uc − 1)/(m_u − 1), the
    margins are n_c = Σ_u m_uc and n = Σ_c n_c; D_o = 1 − Σ_c o_cc / n, D_e = 1 − Σ_c n_c(n_c − 1)/(n(n − 1)),
    α = 1 − D_o / D_e. None when there is nothing to pair or a single value (D_e = 0)."""
    if not matrix.size or np.isnan(matrix).all():
        return None
    return _alpha_of_counts(*_unit_counts(matrix, int(np.nanmax(matrix)) + 1))


def _record(record: RecordSubmissions, annotators: Sequence[str], labels: Sequence[str],
            label_code: Mapping[str, int]) -> _Record:
    tokens = record.tokens if record.tokens is not None else tokenize(record.text)
    size = len(label_code) + 1
    codes = {name: token_codes(tokens, spans, {None: 0, **label_code}) for name, spans in record.spans.items()}
    block = np.full((len(annotators), len(tokens)), np.nan)
    for row, name in enumerate(annotators):
        if name in codes:
            block[row] = codes[name]
    tally, label_tallies, joints, same = _Tally(), {label: _Tally() for label in labels}, {}, True
    for a, b in combinations(sorted(record.spans), 2):
        first, second = record.spans[a], record.spans[b]
        matched_before = tally.strict
        tally.add(first, second)
        same = same and tally.strict - matched_before == len(first) + len(second)
        of_first, of_second = _by_label(first), _by_label(second)
        for label in (of_first.keys() | of_second.keys()) & label_tallies.keys():
            label_tallies[label].add(of_first.get(label, []), of_second.get(label, []))
        joints[(a, b)] = _joint(codes[a], codes[b], size)
    patterns, weights = _unit_counts(block, size)
    spans = Counter(s.label for spans in record.spans.values() for s in spans)
    return _Record(tally, label_tallies, joints, patterns, weights, same, len(tokens), spans)


def _by_label(spans: Sequence[Span]) -> dict[str, list[Span]]:
    grouped: dict[str, list[Span]] = {}
    for span in spans:
        grouped.setdefault(span.label, []).append(span)
    return grouped


def _as_binary_joint(joint: np.ndarray, code: int) -> np.ndarray:
    """A pair's joint counts over all values, seen as "value ``code`` or not" (2 × 2)."""
    both = joint[code, code]
    first, second = joint[code, :].sum(), joint[:, code].sum()
    return np.array([[joint.sum() - first - second + both, second - both], [first - both, both]])


def _figures(records: Sequence[_Record], label: str | None = None, code: int | None = None) -> dict[str, Any]:
    """The four figures over ``records``; per label when ``label`` (and its token value ``code``) is given."""
    strict = relaxed = total = 0
    for record in records:
        part = record.tally if label is None else record.label_tallies[label]
        strict, relaxed, total = strict + part.strict, relaxed + part.relaxed, total + part.total
    joints: dict[tuple[str, str], np.ndarray] = {}
    for record in records:
        for pair, joint in record.joints.items():
            joints[pair] = joints[pair] + joint if pair in joints else joint
    weighted = []
    for joint in joints.values():
        kappa = _kappa_of_joint(joint if code is None else _as_binary_joint(joint, code))
        if kappa is not None:
            weighted.append((int(joint.sum()), kappa))
    patterns = np.concatenate([record.patterns for record in records]) if records else np.empty((0, 2))
    weights = np.concatenate([record.weights for record in records]) if records else np.empty(0)
    if code is not None and len(weights):
        patterns = np.stack([patterns.sum(axis=1) - patterns[:, code], patterns[:, code]], axis=1)
    return {
        "strict_f1": strict / total if total else None,
        "relaxed_f1": relaxed / total if total else None,
        "kappa": sum(n * k for n, k in weighted) / sum(n for n, _ in weighted) if weighted else None,
        "alpha": _alpha_of_counts(patterns, weights),
        "spans": sum(sum(record.spans.values()) if label is None else record.spans[label] for record in records),
    }


def agreement(records: Sequence[RecordSubmissions], *, labels: Sequence[str] | None = None,
              groups: Sequence[Hashable] | None = None) -> dict[str, Any]:
    """Agreement over ``records`` (each with two or more annotators; records with fewer are skipped).

    ``labels``: the labels reported on (default: every label some annotator used). ``groups``: one key per
    record (a day, a batch), for figures per group. Returns ``records``, ``annotators`` (sorted), ``tokens``
    (counted once per record), ``unanimous`` (records on which every pair marked exactly the same spans),
    ``overall`` and ``per_label`` (label → the four figures plus ``spans``, how many spans the annotators
    marked), ``per_record`` (each kept record's overall figures plus ``unanimous``, in order) and
    ``per_group`` (key → overall figures plus ``records``, keys in order of first appearance).
    """
    keep = [i for i, r in enumerate(records) if len(r.spans) >= 2]
    kept = [records[i] for i in keep]
    annotators = sorted({name for r in kept for name in r.spans})
    used = sorted({s.label for r in kept for spans in r.spans.values() for s in spans})
    labels = list(labels) if labels is not None else used
    label_code = {label: i + 1 for i, label in enumerate(sorted(set(labels) | set(used)))}
    parts = [_record(r, annotators, labels, label_code) for r in kept]
    per_group: dict[Hashable, dict[str, Any]] = {}
    if groups is not None:
        members: dict[Hashable, list[_Record]] = {}
        for i, part in zip(keep, parts):
            members.setdefault(groups[i], []).append(part)
        per_group = {key: {**_figures(group), "records": len(group)} for key, group in members.items()}
    return {
        "records": len(kept), "annotators": annotators,
        "tokens": sum(part.tokens for part in parts), "unanimous": sum(part.unanimous for part in parts),
        "overall": _figures(parts),
        "per_label": {label: _figures(parts, label, label_code[label]) for label in labels},
        "per_record": [{**_figures([part]), "unanimous": part.unanimous} for part in parts],
        "per_group": per_group,
    }
