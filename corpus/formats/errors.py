"""What the format layer reports: a file it cannot read, and a span that does not hold up."""
from __future__ import annotations

from dataclasses import dataclass

from corpus.types import Span

__all__ = ["FormatError", "SpanProblem"]


class FormatError(ValueError):
    """A corpus file that cannot be read (or written) as the format it claims to be.

    ``path`` is the file as the person who uploaded it knows it (relative to the folder they gave, never a
    server path), ``line`` is 1-based or ``None`` when the problem is not on one line, and ``message`` says
    what is wrong in words that person can act on.
    """

    def __init__(self, path: str | None, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where = f"{where}, line {self.line}" if where else f"line {self.line}"
        return f"{where}: {self.message}" if where else self.message

    def __reduce__(self):  # keep the three fields when pickled (Celery sends exceptions between processes)
        return (type(self), (self.path, self.line, self.message))


@dataclass(frozen=True, slots=True)
class SpanProblem:
    """One span that fails validation: the document it is in, the span, and why.

    ``kind`` is one of ``"out_of_range"``, ``"empty"``, ``"overlap"``, ``"unknown_label"`` so a caller can
    group problems; ``reason`` is the sentence to show.
    """

    document: str
    span: Span
    kind: str
    reason: str

    def __str__(self) -> str:
        name = self.document or "(unnamed document)"
        return f"{name}: span {self.span.start}-{self.span.end} {self.span.label}: {self.reason}"
