"""The two value types every part of deidloop speaks: a span of characters and a document."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A labelled range of characters ``text[start:end]`` (end exclusive)."""

    start: int
    end: int
    label: str


@dataclass(frozen=True, slots=True)
class Document:
    """A text with its (possibly empty) gold spans, sorted by position."""

    text: str
    spans: tuple[Span, ...] = ()
    name: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
