"""Several annotators' spans on one record, merged for adjudication (pure: no Django).

- :func:`agreed_spans` — the spans every annotator marked (same start, end and label).
- :func:`majority_spans` — the spans more than half of the annotators marked, or None when a vote is tied
  (a span marked by exactly half of them): a person must decide then.
- :func:`conflicts` — the places where they disagree: each conflict is a stretch of text covered by spans
  that not everybody marked, overlapping ones joined, with every annotator's spans there (an empty list
  says "no PHI here"). Resolving every conflict with one annotator's version (or none) and keeping the
  agreed spans gives a record's gold; that is what the adjudication page does, key by key.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from corpus.types import Span

__all__ = ["Conflict", "agreed_spans", "conflicts", "majority_spans", "resolve"]


@dataclass(frozen=True)
class Conflict:
    """A stretch ``[start, end)`` where annotators disagree, and each annotator's spans inside it."""

    start: int
    end: int
    versions: Mapping[str, tuple[Span, ...]]


def _counts(spans_by_annotator: Mapping[str, Sequence[Span]]) -> Counter:
    """How many annotators marked each span (one vote per annotator, however often they repeated it)."""
    return Counter(span for spans in spans_by_annotator.values() for span in set(spans))


def agreed_spans(spans_by_annotator: Mapping[str, Sequence[Span]]) -> list[Span]:
    """The spans every annotator marked, in text order."""
    n = len(spans_by_annotator)
    return sorted(span for span, votes in _counts(spans_by_annotator).items() if votes == n)


def majority_spans(spans_by_annotator: Mapping[str, Sequence[Span]]) -> list[Span] | None:
    """The spans more than half of the annotators marked, in text order; None when some span has exactly
    half of the votes (a tie) or the accepted spans overlap one another."""
    n = len(spans_by_annotator)
    votes = _counts(spans_by_annotator)
    if any(2 * count == n for count in votes.values()):
        return None
    accepted = sorted(span for span, count in votes.items() if 2 * count > n)
    if any(a.end > b.start for a, b in zip(accepted, accepted[1:])):
        return None
    return accepted


def conflicts(spans_by_annotator: Mapping[str, Sequence[Span]]) -> list[Conflict]:
    """The stretches of text where the annotators' spans differ, in text order (see the module notes)."""
    agreed = set(agreed_spans(spans_by_annotator))
    disputed = sorted({span for spans in spans_by_annotator.values() for span in spans if span not in agreed})
    regions: list[list[int]] = []
    for span in disputed:
        if regions and span.start < regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], span.end)
        else:
            regions.append([span.start, span.end])
    return [
        Conflict(start, end, {
            name: tuple(sorted(s for s in spans if s not in agreed and start <= s.start and s.end <= end))
            for name, spans in sorted(spans_by_annotator.items())
        })
        for start, end in regions
    ]


def resolve(spans_by_annotator: Mapping[str, Sequence[Span]], choices: Sequence[str | None]) -> list[Span]:
    """The gold when conflict ``i`` is settled by ``choices[i]``: an annotator's name (their version) or None
    (no PHI there); the agreed spans are kept. Raises ValueError for a wrong number of choices or an unknown
    annotator."""
    found = conflicts(spans_by_annotator)
    if len(choices) != len(found):
        raise ValueError(f"{len(found)} conflicts but {len(choices)} choices")
    gold = list(agreed_spans(spans_by_annotator))
    for conflict, choice in zip(found, choices):
        if choice is None:
            continue
        if choice not in conflict.versions:
            raise ValueError(f"no annotator {choice!r} on this record")
        gold.extend(conflict.versions[choice])
    return sorted(gold)
