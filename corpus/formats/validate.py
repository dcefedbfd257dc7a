"""Checks on spans before they are stored: reported, never repaired, so the person importing decides."""
from __future__ import annotations

from typing import Collection, Iterable

from corpus.types import Document, Span

from .errors import SpanProblem

__all__ = ["validate_spans"]


def validate_spans(
    docs: Iterable[Document],
    *,
    labels: Collection[str] | None = None,
    allow_overlap: bool = False,
) -> list[SpanProblem]:
    """Every problem with the documents' spans, in document order and then span order.

    A span is reported when it lies outside its text (``out_of_range``), covers no characters (``empty``),
    has a label outside ``labels`` when a label set is given (``unknown_label``), or overlaps an earlier
    span when ``allow_overlap`` is false (``overlap``; an exact repeat counts too).  An empty list means
    the spans can be stored as they are.
    """
    known = None if labels is None else frozenset(labels)
    problems: list[SpanProblem] = []
    for doc in docs:
        name = doc.name
        n = len(doc.text)
        reach: Span | None = None  # the span reaching furthest right so far
        for span in sorted(doc.spans):
            start, end = span.start, span.end
            positioned = True
            if start < 0 or end > n:
                problems.append(
                    SpanProblem(name, span, "out_of_range", f"lies outside the text ({n} characters)")
                )
                positioned = False
            elif start >= end:
                problems.append(SpanProblem(name, span, "empty", "covers no characters (start is not before end)"))
                positioned = False
            if known is not None and span.label not in known:
                problems.append(
                    SpanProblem(name, span, "unknown_label", f"label {span.label!r} is not in the label set")
                )
            if not positioned:
                continue
            if reach is not None and start < reach.end and not allow_overlap:
                other = f"{reach.start}-{reach.end} {reach.label}"
                reason = f"repeats span {other}" if reach == span else f"overlaps span {other}"
                problems.append(SpanProblem(name, span, "overlap", reason))
            if reach is None or end > reach.end:
                reach = span
    return problems
