"""Small annotated notes built piece by piece for tagger tests (offsets recorded as text is appended)."""
from __future__ import annotations

from corpus.types import Document, Span


class NoteBuilder:
    def __init__(self) -> None:
        self._parts: list[str] = []
        self._spans: list[Span] = []
        self._length = 0

    def add(self, text: str, label: str | None = None) -> "NoteBuilder":
        if label:
            self._spans.append(Span(self._length, self._length + len(text), label))
        self._parts.append(text)
        self._length += len(text)
        return self

    def build(self, name: str) -> Document:
        return Document(text="".join(self._parts), spans=tuple(self._spans), name=name)
