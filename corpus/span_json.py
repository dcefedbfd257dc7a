"""The one codec between stored span JSON and :class:`~corpus.types.Span`, with the stored schema.

Spans are kept in the database as JSON (``Annotation.spans``, ``Annotation.suggested``,
``PoolScore.pre_annotations``, ``SilverSentence.spans``) and sent to the workbench as the same JSON. One
stored span is an object::

    {"start": int, "end": int,     character offsets into the document's text, end exclusive
     "label": str,                 a PHI label of the project's schema
     "origin": str,                who put it there: "model" (a suggestion), "human", or "silver"
                                   (machine-labelled for self-training; never gold, never exported)
     "status": str,                "accepted" (an annotator stands by it) or "pending" (a suggestion not
                                   yet looked at); human spans are always accepted
     "confidence": float}          the model's probability of the span (suggestions only)

Only ``start``, ``end`` and ``label`` are required; a span without ``origin`` is human. A model's
pre-annotations (``PoolScore.pre_annotations``) are ``{"spans": [...], "possible_missed": [[start, end,
p_phi], ...]}``, their spans holding ``start``, ``end``, ``label`` and ``confidence``.

Every conversion goes through here: nothing else builds a :class:`Span` from a dict or a dict from a span.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from corpus.types import Span

__all__ = [
    "ORIGINS",
    "STATUSES",
    "SpanJSONError",
    "StoredSpan",
    "count_label",
    "gold_spans",
    "read_span",
    "read_stored",
    "relabelled",
    "write_span",
]

ORIGINS = ("model", "human", "silver")
STATUSES = ("accepted", "pending")


class SpanJSONError(ValueError):
    """A span object that does not follow the stored schema; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class StoredSpan:
    """A span with what the stored schema says about it."""

    span: Span
    origin: str = "human"
    status: str = "accepted"
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        return write_span(self.span, origin=self.origin, status=self.status, confidence=self.confidence)


def read_span(item: Mapping[str, Any]) -> Span:
    """The offsets and label of a stored span (integers and text, whatever JSON type they came as)."""
    try:
        return Span(int(item["start"]), int(item["end"]), str(item["label"]))
    except (KeyError, TypeError, ValueError):
        raise SpanJSONError(f"a span needs integer start and end and a label, got {item!r}") from None


def read_stored(item: Mapping[str, Any], *, origins: Iterable[str] = ORIGINS) -> StoredSpan:
    """A stored span, checked against the schema; ``origins`` narrows the origins accepted.

    A human span is accepted; a model or silver span keeps ``"accepted"`` only when it says so.
    """
    span = read_span(item)
    allowed = tuple(origins)
    origin = item.get("origin", "human")
    if origin not in allowed:
        raise SpanJSONError(f"a span's origin is {' or '.join(repr(o) for o in allowed)}, got {origin!r}")
    status = "accepted" if item.get("status") == "accepted" or origin == "human" else "pending"
    confidence = item.get("confidence")
    if confidence is not None:
        try:
            confidence = float(confidence)
        except (TypeError, ValueError):
            raise SpanJSONError(f"a span's confidence is a number, got {confidence!r}") from None
    return StoredSpan(span, origin, status, confidence)


def write_span(
    span: Span, *, origin: str | None = None, status: str | None = None, confidence: float | None = None,
    shift: int = 0,
) -> dict[str, Any]:
    """The stored JSON of ``span`` (moved ``shift`` characters right); keys left as None are left out."""
    item: dict[str, Any] = {"start": span.start + shift, "end": span.end + shift, "label": span.label}
    if origin is not None:
        item["origin"] = origin
    if status is not None:
        item["status"] = status
    if confidence is not None:
        item["confidence"] = confidence
    return item


def gold_spans(items: Iterable[Mapping[str, Any]]) -> tuple[Span, ...]:
    """The gold of a stored annotation: its spans in text order, silver spans left out."""
    return tuple(sorted(read_span(item) for item in items if item.get("origin") != "silver"))


def relabelled(items: Iterable[Mapping[str, Any]], *, old: str, new: str) -> tuple[list[dict[str, Any]], int]:
    """Stored spans with the label ``old`` renamed ``new`` (every other key kept), and how many changed."""
    renamed, changed = [], 0
    for item in items:
        if item.get("label") == old:
            item = {**item, "label": new}
            changed += 1
        renamed.append(dict(item))
    return renamed, changed


def count_label(items: Iterable[Mapping[str, Any]], label: str) -> int:
    """How many of the stored spans carry ``label``."""
    return sum(1 for item in items if item.get("label") == label)
