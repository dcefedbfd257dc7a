"""Import of corpora into a project: all or nothing, idempotent by content hash, bulk inserts only."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from django.db import transaction
from django.utils import timezone

from corpus.formats import read_corpus, validate_spans
from corpus.formats.errors import SpanProblem
from annotator.models import Annotation, AuditEvent, Document, Project
from annotator.services.audit import record_event
from corpus.span_json import write_span
from corpus.types import Document as CorpusDocument

FORMATS = ("txt", "jsonl", "brat", "conll", "i2b2xml")
# Formats whose files say "these are all the spans": a document with none is annotated as PHI-free.
ANNOTATED_FORMATS = frozenset({"brat", "conll", "i2b2xml", "jsonl"})
_PROBLEMS_SHOWN = 20


class ImportRejected(ValueError):
    """The corpus is readable but its spans do not hold up; nothing was imported."""

    def __init__(self, problems: Sequence[SpanProblem]) -> None:
        self.problems = list(problems)
        shown = "\n".join(f"  {problem}" for problem in self.problems[:_PROBLEMS_SHOWN])
        more = len(self.problems) - _PROBLEMS_SHOWN
        tail = f"\n  … and {more} more" if more > 0 else ""
        super().__init__(f"{len(self.problems)} span problem(s); nothing was imported:\n{shown}{tail}")


@dataclass
class ImportReport:
    created: int = 0
    duplicates: int = 0
    annotated: int = 0
    spans: int = 0
    labels_seen: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "created": self.created, "duplicates": self.duplicates, "annotated": self.annotated,
            "spans": self.spans, "labels_seen": self.labels_seen,
        }


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def labels_in(documents: Sequence[CorpusDocument]) -> list[str]:
    return sorted({span.label for document in documents for span in document.spans})


def import_documents(
    *,
    project: Project,
    documents: Sequence[CorpusDocument],
    annotated: bool,
    evaluation: bool = False,
    user=None,
    source: str = "",
) -> ImportReport:
    """Add ``documents`` to the project's pool (or evaluation set); with ``annotated`` their spans are gold.

    Spans are checked against the project's labels and overlap rule first; any problem rejects the whole
    import (``ImportRejected``). A text already in the project is skipped, so importing twice is a no-op.
    """
    problems = validate_spans(
        documents, labels=project.labels or None, allow_overlap=project.allow_overlap
    ) if annotated else []
    if problems:
        raise ImportRejected(problems)

    report = ImportReport(labels_seen=labels_in(documents) if annotated else [])
    hashes = [content_hash(document.text) for document in documents]
    role = Document.Role.EVALUATION if evaluation else Document.Role.POOL
    status = Document.Status.SUBMITTED if annotated else Document.Status.POOL
    now = timezone.now()

    with transaction.atomic():
        # Lock the project row so that two imports into one project cannot both insert the same text.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        known = set(
            Document.objects.filter(project=project, content_hash__in=hashes).values_list("content_hash", flat=True)
        )
        new_rows: list[Document] = []
        new_sources: list[CorpusDocument] = []
        for document, digest in zip(documents, hashes):
            if digest in known:
                report.duplicates += 1
                continue
            known.add(digest)
            new_rows.append(Document(
                project=project, external_id=document.name[:500], text=document.text, content_hash=digest,
                meta=dict(document.meta), role=role, status=status,
            ))
            new_sources.append(document)
        Document.objects.bulk_create(new_rows, batch_size=2000)
        if annotated:
            Annotation.objects.bulk_create(
                [
                    Annotation(
                        document=row, annotator=None, source=Annotation.Source.IMPORT,
                        spans=[write_span(span, origin="human") for span in sorted(corpus_document.spans)],
                        state=Annotation.State.SUBMITTED, submitted_at=now,
                    )
                    for row, corpus_document in zip(new_rows, new_sources)
                ],
                batch_size=2000,
            )
            report.annotated = len(new_rows)
            report.spans = sum(len(document.spans) for document in new_sources)
        report.created = len(new_rows)
        record_event(
            user=user, action=AuditEvent.Action.IMPORT, project=project,
            detail={"source": source, "evaluation": evaluation, **report.as_dict()},
        )
    return report


def read_path(*, path: Path, fmt: str, annotated: bool | None = None) -> tuple[list[CorpusDocument], bool]:
    """The documents in a file or folder, and whether they are gold (``annotated=None`` infers it).

    Inferred: brat, CoNLL and i2b2 XML carry gold spans; plain text does not; a JSONL file is gold when any
    of its records has spans (a file of bare texts is a pool to annotate). ``annotated=False`` declares the
    files texts to annotate: a brat ``.txt`` may then lack its ``.ann``, and spans in the files are not
    imported. Without it a brat ``.txt`` missing its ``.ann`` is a FormatError, never PHI-free gold.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    options = {"text_only": True} if fmt == "brat" and annotated is False else {}
    documents = read_corpus(Path(path), fmt, **options)
    if annotated is None:
        annotated = fmt in ANNOTATED_FORMATS and (fmt != "jsonl" or any(d.spans for d in documents))
    return documents, annotated


def import_path(
    *, project: Project, path: Path, fmt: str, evaluation: bool = False, user=None,
    annotated: bool | None = None,
) -> ImportReport:
    """Read a file or folder in ``fmt`` and import it (see :func:`read_path` and :func:`import_documents`)."""
    documents, annotated = read_path(path=path, fmt=fmt, annotated=annotated)
    return import_documents(
        project=project, documents=documents, annotated=annotated, evaluation=evaluation, user=user,
        source=f"{fmt}:{Path(path).name}",
    )
