"""An upload previewed before it is imported: what it holds, counted from the staged files, nothing written.

Uploading stages the files (``annotator.services.uploads``, every check of an upload) under
``DATA_DIR/uploads/preview-TOKEN/corpus`` with the choices made on the form beside them (``request.json``),
and reads them once, so a file that cannot be read is refused on the form. The preview counts records,
annotated records, spans per label, labels the project does not have, texts already in the project and the
evaluation set the import would set aside. Confirming adds the unknown labels the lead chose to add and
imports, in the request or, for an upload above ``DEIDLOOP_SYNC_IMPORT_BYTES``, as an :class:`ImportJob` that
takes over the staged folder; cancelling deletes it. A preview belongs to the lead who uploaded it, in
that project; one left for a day is deleted by the next upload.
"""
from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.translation import gettext

from annotator.models import Document, ImportJob, Project
from annotator.services.imports import (
    FORMATS, ImportReport, content_hash, evaluation_draw, import_documents, read_path,
)
from annotator.services.labels import add_label
from annotator.services.uploads import StagedUpload, queue_staged_import, stage_upload, uploads_root
from corpus.formats import validate_spans
from corpus.types import Document as CorpusDocument

PREVIEW_PREFIX = "preview-"
#: A preview nobody confirmed or cancelled is deleted after this long.
PREVIEW_TTL_SECONDS = 24 * 3600
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
_PROBLEMS_SHOWN = 20
_REQUEST = "request.json"


class PreviewNotFound(LookupError):
    """No such preview for this lead in this project (never made, cancelled, imported or expired)."""


class LabelsUndecided(ValueError):
    """The upload holds labels the project does not have, and the lead has not said to add them."""


@dataclass(frozen=True)
class LabelCount:
    label: str
    spans: int
    known: bool  # among the project's labels


@dataclass
class ImportPreview:
    """What importing the staged upload would do, as it stands now."""

    token: str
    filenames: list[str]
    format: str
    files: int
    bytes: int
    records: int
    annotated: bool  # imported as gold
    annotated_records: int  # records holding at least one span
    spans: int
    labels: list[LabelCount]
    duplicates: int  # texts already in the project
    repeated: int  # texts repeated within the upload
    new_records: int
    evaluation: int  # of the new records, those the import would set aside as the evaluation set
    evaluation_share: float
    all_evaluation: bool
    background: bool  # imported by a worker, with progress
    problems: list[str] = field(default_factory=list)  # span problems other than unknown labels
    more_problems: int = 0

    @property
    def unknown_labels(self) -> list[LabelCount]:
        return [row for row in self.labels if not row.known]

    @property
    def evaluation_percent(self) -> int:
        return round(self.evaluation_share * 100)


def _folder(token: str) -> Path:
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise PreviewNotFound(token)
    return uploads_root() / f"{PREVIEW_PREFIX}{token}"


def _sweep_stale_previews() -> None:
    oldest = time.time() - PREVIEW_TTL_SECONDS
    for folder in uploads_root().glob(f"{PREVIEW_PREFIX}*"):
        try:
            if folder.is_dir() and not folder.is_symlink() and folder.stat().st_mtime < oldest:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def stage_preview(
    *, project: Project, files: Sequence[UploadedFile], fmt: str, user, evaluation: bool = False,
    annotated: bool | None = None, evaluation_share: float = 0.0,
) -> str:
    """Stage the upload for a preview and return its token; an upload or file that cannot be read raises
    (``UploadError``, ``FormatError``) and leaves nothing behind."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    _sweep_stale_previews()
    token = secrets.token_urlsafe(24)
    folder = _folder(token)
    folder.mkdir(mode=0o700)
    try:
        staged = stage_upload(files, into=folder / "corpus")
        read_path(path=staged.path, fmt=fmt, annotated=annotated)
        request = {
            "project_id": project.pk, "user_id": user.pk, "format": fmt, "evaluation": evaluation,
            "annotated": annotated, "evaluation_share": evaluation_share,
            "filenames": [upload.name or "upload" for upload in files], "files": staged.files,
            "bytes": staged.bytes,
        }
        (folder / _REQUEST).write_text(json.dumps(request), encoding="utf-8")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return token


def _request(*, project: Project, token: str, user) -> tuple[Path, dict]:
    folder = _folder(token)
    try:
        request = json.loads((folder / _REQUEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PreviewNotFound(token) from None
    if request.get("project_id") != project.pk or request.get("user_id") != user.pk:
        raise PreviewNotFound(token)
    return folder, request


def _staged(folder: Path, request: dict) -> StagedUpload:
    corpus = folder / "corpus"
    entries = list(corpus.iterdir())
    path = entries[0] if len(entries) == 1 and entries[0].is_file() else corpus
    return StagedUpload(folder=corpus, path=path, files=request["files"], bytes=request["bytes"])


def _summarise(
    *, project: Project, token: str, request: dict, documents: Sequence[CorpusDocument], annotated: bool,
) -> ImportPreview:
    per_label = Counter(span.label for document in documents for span in document.spans) if annotated else Counter()
    known = set(project.labels or per_label)
    problems = [
        str(problem) for problem in validate_spans(documents, labels=None, allow_overlap=project.allow_overlap)
    ] if annotated else []
    hashes = [content_hash(document.text) for document in documents]
    in_project = set(
        Document.objects.filter(project=project, content_hash__in=hashes).values_list("content_hash", flat=True)
    )
    new: list[CorpusDocument] = []
    seen: set[str] = set()
    duplicates = repeated = 0
    for document, digest in zip(documents, hashes):
        if digest in in_project:
            duplicates += 1
        elif digest in seen:
            repeated += 1
        else:
            seen.add(digest)
            new.append(document)
    share = request["evaluation_share"]
    if request["evaluation"]:
        evaluation = len(new)
    else:
        evaluation = len(evaluation_draw(new, share=share, annotated=annotated)) if share and new else 0
    return ImportPreview(
        token=token, filenames=request["filenames"], format=request["format"], files=request["files"],
        bytes=request["bytes"], records=len(documents), annotated=annotated,
        annotated_records=sum(1 for document in documents if document.spans),
        spans=sum(per_label.values()),
        labels=[LabelCount(label=label, spans=count, known=label in known) for label, count in sorted(per_label.items())],
        duplicates=duplicates, repeated=repeated, new_records=len(new), evaluation=evaluation,
        evaluation_share=share, all_evaluation=request["evaluation"],
        background=request["bytes"] > settings.DEIDLOOP_SYNC_IMPORT_BYTES,
        problems=problems[:_PROBLEMS_SHOWN], more_problems=max(0, len(problems) - _PROBLEMS_SHOWN),
    )


def _read(folder: Path, request: dict) -> tuple[list[CorpusDocument], bool]:
    return read_path(path=_staged(folder, request).path, fmt=request["format"], annotated=request["annotated"])


def import_preview(*, project: Project, token: str, user) -> ImportPreview:
    """The preview of the lead's staged upload; ``PreviewNotFound`` when there is none."""
    folder, request = _request(project=project, token=token, user=user)
    documents, annotated = _read(folder, request)
    return _summarise(project=project, token=token, request=request, documents=documents, annotated=annotated)


def confirm_import(*, project: Project, token: str, user, add_unknown_labels: bool) -> ImportReport | ImportJob:
    """Import the previewed upload: its report, or the queued :class:`ImportJob` of an upload too large for
    a request (hand it to a worker with ``annotator.tasks.enqueue_import``).

    Labels the project does not have are added first when ``add_unknown_labels`` (each audited, in the
    import's transaction when it runs here); otherwise ``LabelsUndecided``. The preview is counted again, so
    the import does what the lead confirms even if the project changed since the page was shown.
    """
    folder, request = _request(project=project, token=token, user=user)
    documents, annotated = _read(folder, request)
    preview = _summarise(project=project, token=token, request=request, documents=documents, annotated=annotated)
    unknown = [row.label for row in preview.unknown_labels]
    if unknown and not add_unknown_labels:
        raise LabelsUndecided(
            gettext("the upload uses %(length)s label(s) the project does not have (%(items)s): add them to the project's labels or refuse the import") % {"length": len(unknown), "items": ', '.join(unknown)}
        )
    if not preview.background:
        with transaction.atomic():
            for label in unknown:
                add_label(project=project, user=user, name=label)
            report = import_documents(
                project=project, documents=documents, annotated=annotated, evaluation=request["evaluation"],
                user=user, source=f"{request['format']}:{', '.join(request['filenames'])}",
                evaluation_share=request["evaluation_share"],
            )
        shutil.rmtree(folder, ignore_errors=True)
        return report
    with transaction.atomic():
        for label in unknown:
            add_label(project=project, user=user, name=label)
        return queue_staged_import(
            project=project, workdir=folder, staged=_staged(folder, request), fmt=request["format"],
            evaluation=request["evaluation"], user=user, annotated=request["annotated"],
            evaluation_share=request["evaluation_share"], filenames=request["filenames"],
        )


def cancel_preview(*, project: Project, token: str, user) -> None:
    """Delete the lead's staged upload; nothing was imported."""
    folder, _request_data = _request(project=project, token=token, user=user)
    shutil.rmtree(folder, ignore_errors=True)
