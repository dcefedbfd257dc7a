"""The de-identified export of a project's gold standard: every gold document concealed per a policy, its
spans moved to where their replacements stand, written in any corpus format with a ``report.json`` beside.

The concealed corpus is still a training corpus: ``text[span.start:span.end]`` of every exported span is the
replacement of a gold PHI (a surrogate, ``[LABEL]``, a mask), so another site can train on it. Spans in
removed sentences leave with their sentence; eponyms (``deid.core.eponyms``) stay as written and are not
exported as PHI; document metadata is left out (it may identify the patient).

The report counts spans per label and strategy, eponyms kept, surrogates that had to mask a value
(``fallbacks``) and values kept by design (``kept``). It never holds an original value or a surrogate.
The plain export (``conceal="none"``) is ``annotator.services.exports``.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from annotator.models import AuditEvent, Project
from annotator.selectors import gold_documents
from annotator.services.audit import record_event
from annotator.services.exports import EXPORT_FORMATS, zipped_folder
from annotator.services.exports import export_corpus as export_plain
from corpus.formats import WriteSummary, write_corpus
from corpus.types import Document
from deid.core.conceal import ConcealError, ConcealReport, conceal
from deid.services.policy import POLICY_CHOICES, Concealment, DeidError

#: ``none`` (the plain gold standard) or a policy of :data:`deid.services.policy.POLICY_CHOICES`.
EXPORT_CONCEALMENTS = ("none", *POLICY_CHOICES)
REPORT_NAME = "report.json"
#: ``progress(done, total)``: records concealed so far, of how many.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ExportResult:
    summary: WriteSummary
    report: dict | None  # None for the plain export
    report_path: Path | None


def report_path_for(out: Path) -> Path:
    """Where the report of an export to ``out`` goes: inside a folder, or beside a file (``NAME.report.json``)."""
    out = Path(out)
    return out / REPORT_NAME if out.is_dir() else out.with_name(f"{out.stem}.{REPORT_NAME}")


def write_report(path: Path, report: dict) -> None:
    """The report as a new private file (0600)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(report, handle, ensure_ascii=False, indent=2, sort_keys=True)
        handle.write("\n")


def conceal_documents(
    documents: list[Document], concealment: Concealment, progress: Progress | None = None,
) -> tuple[list[Document], ConcealReport]:
    """Each document concealed, with its spans at their new offsets; the reports added up.
    ``progress(done, total)`` is called about every hundredth document."""
    concealed, total = [], ConcealReport()
    step = max(1, len(documents) // 100)
    for index, document in enumerate(documents):
        if progress is not None and index % step == 0:
            progress(index, len(documents))
        try:
            result = conceal(document.text, document.spans, concealment.policy,
                             concealment.for_document(document.name, document.meta), eponym_guard=concealment.guard)
        except ConcealError as error:
            raise DeidError(f"{document.name}: {error}") from None
        concealed.append(Document(text=result.text, spans=result.spans, name=document.name))
        total = total + result.report
    return concealed, total


def export_deidentified(
    *, project: Project, fmt: str, out: Path, conceal: str = "none", user=None, include_evaluation: bool = True,
    statuses: Collection[str] | None = None, progress: Progress | None = None,
) -> ExportResult:
    """Write the project's gold documents (of ``statuses`` only, when given) to ``out`` in ``fmt``, concealed
    per ``conceal`` (``none``: as they are), with the report beside them; audited as an export."""
    if fmt not in EXPORT_FORMATS:
        raise DeidError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if conceal not in EXPORT_CONCEALMENTS:
        raise DeidError(f"unknown concealment {conceal!r}; choose one of {', '.join(EXPORT_CONCEALMENTS)}")
    if conceal == "none":
        summary = export_plain(project=project, fmt=fmt, out=out, user=user, include_evaluation=include_evaluation,
                               statuses=statuses)
        return ExportResult(summary, None, None)
    concealment = Concealment(project, conceal)
    documents = gold_documents(project=project, include_evaluation=include_evaluation, statuses=statuses)
    concealed, report = conceal_documents(documents, concealment, progress)
    summary = write_corpus(concealed, Path(out), fmt)
    details = {
        "project": project.name, "format": fmt, "conceal": conceal, "policy": concealment.strategies(),
        "surrogate_scope": project.surrogate_scope if concealment.surrogates is not None else None,
        "documents": summary.documents, "gold_spans": sum(len(d.spans) for d in documents),
        "spans": summary.spans, **report.as_dict(),
        "to_review": [],
        "to_review_note": "gold spans were checked by annotators; de-identified model output lists spans to review",
    }
    path = report_path_for(Path(out))
    write_report(path, details)
    record_event(
        user=user, action=AuditEvent.Action.EXPORT, project=project,
        detail={"format": fmt, "conceal": conceal, "documents": summary.documents, "spans": summary.spans,
                "policy": concealment.strategies(), "include_evaluation": include_evaluation,
                **({"statuses": sorted(statuses)} if statuses is not None else {})},
    )
    return ExportResult(summary, details, path)


def export_archive(
    *, project: Project, fmt: str, conceal: str = "none", user=None, include_evaluation: bool = True,
    statuses: Collection[str] | None = None, progress: Progress | None = None,
) -> tuple[bytes, str]:
    """The export as bytes for a download: the plain JSONL as its file, anything else as a .zip of the folder
    written (data and, when concealed, ``report.json``)."""
    with tempfile.TemporaryDirectory(prefix="deidloop-export-") as workdir:
        base = Path(workdir)
        suffix = "" if conceal == "none" else f"-{conceal}"
        stem = f"{project.name}-{fmt}{suffix}".replace("/", "_").replace(" ", "_")
        if fmt == "jsonl" and conceal == "none":
            target = base / f"{stem}.jsonl"
            export_deidentified(project=project, fmt=fmt, out=target, conceal=conceal, user=user,
                                include_evaluation=include_evaluation, statuses=statuses, progress=progress)
            return target.read_bytes(), target.name
        target = base / stem
        target.mkdir()
        export_deidentified(project=project, fmt=fmt, out=target, conceal=conceal, user=user,
                            include_evaluation=include_evaluation, statuses=statuses, progress=progress)
        return zipped_folder(target), f"{stem}.zip"
