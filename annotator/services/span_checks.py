"""The check every write of spans to a record passes (a draft, a submission, an adjudication): readable stored
spans, inside the text, of the project's labels, overlapping only where the project allows it."""
from __future__ import annotations

from typing import Sequence

from annotator.models import Document
from corpus.formats import validate_spans
from corpus.span_json import SpanJSONError, StoredSpan, read_stored
from corpus.types import Document as CorpusDocument


class SpanError(ValueError):
    """Spans that cannot be stored on the record, with the reason (the first five problems)."""


def checked_spans(*, document: Document, spans: Sequence[dict]) -> list[StoredSpan]:
    """``spans`` read and checked against ``document`` and its project, in text order; raises ``SpanError``."""
    project = document.project
    try:
        stored = sorted((read_stored(span, origins=("model", "human")) for span in spans), key=lambda s: s.span)
    except SpanJSONError as error:
        raise SpanError(str(error)) from None
    problems = validate_spans(
        [CorpusDocument(text=document.text, spans=tuple(s.span for s in stored), name=document.external_id)],
        labels=project.labels or None, allow_overlap=project.allow_overlap,
    )
    if problems:
        raise SpanError("; ".join(str(problem) for problem in problems[:5]))
    return stored
