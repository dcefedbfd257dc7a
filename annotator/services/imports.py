"""Import of corpora into a project: all or nothing, idempotent by content hash, bulk inserts only."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from django.db import transaction
from django.utils import timezone

from corpus.formats import brat, conll, i2b2xml, jsonl, read_corpus, txt, validate_spans
from corpus.formats.errors import SpanProblem
from annotator.models import Annotation, AuditEvent, Document, Project
from annotator.services.audit import record_event
from corpus.span_json import write_span
from corpus.split import stratified_evaluation
from corpus.types import Document as CorpusDocument

FORMATS = ("txt", "jsonl", "brat", "conll", "i2b2xml")
SUFFIXES = {"txt": txt.SUFFIXES, "jsonl": jsonl.SUFFIXES, "brat": brat.SUFFIXES, "conll": conll.SUFFIXES,
            "i2b2xml": i2b2xml.SUFFIXES}
#: A folder read with progress is read in about this many parts.
_PROGRESS_STEPS = 50
#: ``progress(done, total)``: files read so far, of how many.
Progress = Callable[[int, int], None]
# Formats whose files say "these are all the spans": a document with none is annotated as PHI-free.
ANNOTATED_FORMATS = frozenset({"brat", "conll", "i2b2xml", "jsonl"})
_PROBLEMS_SHOWN = 20
#: The largest share of an import that may be set aside for evaluation (the pool keeps the rest).
MAX_EVALUATION_SHARE = 0.9


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
    evaluation: int = 0  # of the records created, those in the evaluation set

    def as_dict(self) -> dict:
        return {
            "created": self.created, "duplicates": self.duplicates, "annotated": self.annotated,
            "spans": self.spans, "labels_seen": self.labels_seen, "evaluation": self.evaluation,
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
    evaluation_share: float = 0.0,
) -> ImportReport:
    """Add ``documents`` to the project's pool (or evaluation set); with ``annotated`` their spans are gold.

    ``evaluation_share`` (0…1) sets that share of the new records aside as the evaluation set instead, drawn
    at random so that it holds every label the new records hold (``corpus.split``); the draw is seeded by the
    texts, so the same corpus is split the same way.

    Spans are checked against the project's labels and overlap rule first; any problem rejects the whole
    import (``ImportRejected``). A text already in the project is skipped, so importing twice is a no-op.
    """
    if not 0 <= evaluation_share <= MAX_EVALUATION_SHARE:  # the forms and the API refuse it first
        raise ValueError(f"the evaluation share is between 0 and {MAX_EVALUATION_SHARE:g}, got {evaluation_share!r}")
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
        if evaluation_share and not evaluation:
            for index in evaluation_draw(new_sources, share=evaluation_share, annotated=annotated):
                new_rows[index].role = Document.Role.EVALUATION
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
        report.evaluation = sum(1 for row in new_rows if row.role == Document.Role.EVALUATION)
        record_event(
            user=user, action=AuditEvent.Action.IMPORT, project=project,
            detail={"source": source, **report.as_dict(), "evaluation": evaluation,
                    "evaluation_share": evaluation_share, "evaluation_records": report.evaluation},
        )
    return report


def evaluation_draw(documents: Sequence[CorpusDocument], *, share: float, annotated: bool) -> list[int]:
    """Which of ``documents`` go to the evaluation set (see :func:`corpus.split.stratified_evaluation`)."""
    seed = hashlib.sha256("".join(sorted(content_hash(document.text) for document in documents)).encode())
    rng = np.random.default_rng(int.from_bytes(seed.digest()[:8], "big"))
    label_sets = [{span.label for span in document.spans} if annotated else set() for document in documents]
    return stratified_evaluation(label_sets, share, rng)


def read_path(
    *, path: Path, fmt: str, annotated: bool | None = None, progress: Progress | None = None,
) -> tuple[list[CorpusDocument], bool]:
    """The documents in a file or folder, and whether they are gold (``annotated=None`` infers it).

    Inferred: brat, CoNLL and i2b2 XML carry gold spans; plain text does not; a JSONL file is gold when any
    of its records has spans (a file of bare texts is a pool to annotate). ``annotated=False`` declares the
    files texts to annotate: a brat ``.txt`` may then lack its ``.ann``, and spans in the files are not
    imported. Without it a brat ``.txt`` missing its ``.ann`` is a FormatError, never PHI-free gold.

    ``progress(done, total)`` is called as the files are read (see :func:`_read_in_parts`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    options = {"text_only": True} if fmt == "brat" and annotated is False else {}
    if progress is None:
        documents = read_corpus(Path(path), fmt, **options)
    else:
        documents = _read_in_parts(Path(path), fmt, options, progress)
    if annotated is None:
        annotated = fmt in ANNOTATED_FORMATS and (fmt != "jsonl" or any(d.spans for d in documents))
    return documents, annotated


def _units(folder: Path, fmt: str, options: dict) -> list[list[Path]] | None:
    """The folder's files that are read together (a brat ``NAME.txt`` with its ``NAME.ann``, else one file),
    or None when the folder is better read whole: a link, a brat text without its ``.ann`` (or the reverse),
    nothing to read — the whole read then reports it with the words it always uses."""
    suffixes = SUFFIXES[fmt]
    entries = [entry for entry in folder.iterdir() if not entry.name.startswith(".")]
    if any(entry.is_symlink() for entry in entries):
        return None
    files = sorted(entry for entry in entries if entry.suffix.lower() in suffixes and entry.is_file())
    if not files:
        return None
    if fmt != "brat":
        return [[entry] for entry in files]
    by_stem: dict[str, list[Path]] = {}
    for entry in files:
        by_stem.setdefault(entry.stem, []).append(entry)
    for unit in by_stem.values():
        kinds = {entry.suffix.lower() for entry in unit}
        if ".txt" not in kinds or (".ann" not in kinds and not options.get("text_only")):
            return None
    return [by_stem[stem] for stem in sorted(by_stem)]


def _read_in_parts(path: Path, fmt: str, options: dict, progress: Progress) -> list[CorpusDocument]:
    """``read_corpus`` of ``path``, reading a folder a part at a time to report progress.

    Each part is a folder of hard links named like ``path`` (so messages name the files as a whole read
    does), holding whole units (a brat text with its ``.ann``); names must still be unique across parts.
    """
    if not path.is_dir():
        progress(0, 1)
        documents = read_corpus(path, fmt, **options)
        progress(1, 1)
        return documents
    units = _units(path, fmt, options) if fmt != "jsonl" else None  # JSON Lines names are unique across files
    if units is None:
        total = sum(1 for entry in path.iterdir() if entry.suffix.lower() in SUFFIXES[fmt])
        progress(0, total)
        documents = read_corpus(path, fmt, **options)
        progress(total, total)
        return documents
    total = sum(len(unit) for unit in units)
    step = max(1, len(units) // _PROGRESS_STEPS)
    documents: list[CorpusDocument] = []
    done = 0
    progress(done, total)
    with tempfile.TemporaryDirectory(prefix="parts-", dir=path.parent) as workdir:
        for index in range(0, len(units), step):
            part = Path(workdir) / str(index) / path.name
            part.mkdir(parents=True)
            batch = units[index:index + step]
            for unit in batch:
                for entry in unit:
                    os.link(entry, part / entry.name)
            documents.extend(read_corpus(part, fmt, **options))
            shutil.rmtree(part.parent)
            done += sum(len(unit) for unit in batch)
            progress(done, total)
    return documents


def import_path(
    *, project: Project, path: Path, fmt: str, evaluation: bool = False, user=None,
    annotated: bool | None = None, evaluation_share: float = 0.0,
) -> ImportReport:
    """Read a file or folder in ``fmt`` and import it (see :func:`read_path` and :func:`import_documents`)."""
    documents, annotated = read_path(path=path, fmt=fmt, annotated=annotated)
    return import_documents(
        project=project, documents=documents, annotated=annotated, evaluation=evaluation, user=user,
        source=f"{fmt}:{Path(path).name}", evaluation_share=evaluation_share,
    )
