"""Export of a project's gold standard: submitted annotations only, silver never."""
from __future__ import annotations

import io
import shutil
import tempfile
import zipfile
from collections.abc import Collection
from pathlib import Path

from corpus.formats import write_corpus
from annotator.models import AuditEvent, Project
from annotator.selectors import gold_documents
from annotator.services.audit import record_event

EXPORT_FORMATS = ("jsonl", "brat", "conll", "i2b2xml")


def export_corpus(
    *, project: Project, fmt: str, out: Path, user=None, include_evaluation: bool = True,
    statuses: Collection[str] | None = None,
):
    """Write the project's gold documents (of ``statuses`` only, when given) to ``out`` in ``fmt``; returns
    the writer's summary."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    documents = gold_documents(project=project, include_evaluation=include_evaluation, statuses=statuses)
    summary = write_corpus(documents, Path(out), fmt)
    detail = {"format": fmt, "documents": summary.documents, "spans": summary.spans}
    if statuses is not None:
        detail.update(include_evaluation=include_evaluation, statuses=sorted(statuses))
    record_event(user=user, action=AuditEvent.Action.EXPORT, project=project, detail=detail)
    return summary


def export_archive(*, project: Project, fmt: str, user=None, include_evaluation: bool = True) -> tuple[bytes, str]:
    """The export as bytes for a download: a .jsonl file, or a .zip of the written folder otherwise."""
    with tempfile.TemporaryDirectory(prefix="deidloop-export-") as workdir:
        base = Path(workdir)
        stem = f"{project.name}-{fmt}".replace("/", "_").replace(" ", "_")
        if fmt == "jsonl":
            target = base / f"{stem}.jsonl"
            export_corpus(project=project, fmt=fmt, out=target, user=user, include_evaluation=include_evaluation)
            return target.read_bytes(), target.name
        target = base / stem
        export_corpus(project=project, fmt=fmt, out=target, user=user, include_evaluation=include_evaluation)
        return zipped_folder(target), f"{stem}.zip"


def zipped_folder(folder: Path) -> bytes:
    """The folder's files as a zip archive under the folder's name; the folder is removed."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, arcname=f"{folder.name}/{path.relative_to(folder).as_posix()}")
    shutil.rmtree(folder, ignore_errors=True)
    return buffer.getvalue()
