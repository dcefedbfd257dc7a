"""Reads of the project's record list and of a record's review page (``annotator.selectors`` holds the other
reads of the app; these are the list's and the review's own).

Who may read what is decided in ``annotator.permissions``: the list starts from ``documents_for`` and reads
annotations through ``annotations_for``, so an annotator finds, sorts and filters only the records handed to
them and sees only their own work on them.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.utils.translation import gettext

from annotator.models import Annotation, AnnotationRevision, AuditEvent, Document, Project
from annotator.permissions import Can, allows, annotations_for, documents_for
from annotator.selectors import document_segments, gold_of
from annotator.signals import records_agreement
from corpus.span_json import gold_spans

#: The orders the list offers: name → its ORDER BY (the record id breaks ties).
SORTS: dict[str, tuple] = {
    "id": ("id",), "-id": ("-id",),
    "name": ("external_id", "id"), "-name": ("-external_id", "-id"),
    "tokens": (F("n_tokens").asc(nulls_last=True), "id"), "-tokens": (F("n_tokens").desc(nulls_last=True), "-id"),
    "status": ("status", "id"), "-status": ("-status", "-id"),
    "submitted": (F("last_submitted").asc(nulls_last=True), "id"),
    "-submitted": (F("last_submitted").desc(nulls_last=True), "-id"),
}


@dataclass(frozen=True)
class RecordFilters:
    """What the list is narrowed to: ``q`` matches a record's number, part of its name or of its text ("#12":
    record 12 only);
    ``annotator`` is a username (someone with an annotation of the record); ``label`` a PHI label some
    submission of the record holds."""

    q: str = ""
    status: str = ""
    role: str = ""
    annotator: str = ""
    label: str = ""
    sort: str = "id"


def record_list(*, user, project: Project, filters: RecordFilters) -> QuerySet[Document]:
    """The records the user may read, filtered and sorted (without their texts), each with ``last_submitted``:
    the time of the latest submission the user may see."""
    sees_all = allows(user=user, project=project, action=Can.SEE_ALL_RECORDS)
    documents = documents_for(user=user, project=project).defer("text", "meta")
    visible = annotations_for(user=user, project=project)
    query = filters.q.strip()
    if query.startswith("#") and query[1:].isdigit():  # "#12": record 12 only
        documents = documents.filter(pk=int(query[1:]))
    elif query:
        match = Q(external_id__icontains=query) | Q(text__icontains=query)
        if query.isdigit():
            match |= Q(pk=int(query))
        documents = documents.filter(match)
    if filters.status:
        documents = documents.filter(status=filters.status)
    if filters.role and sees_all:
        documents = documents.filter(role=filters.role)
    if filters.annotator and sees_all:
        documents = documents.filter(Exists(visible.filter(document=OuterRef("pk"),
                                                           annotator__username=filters.annotator)))
    submitted = visible.filter(document=OuterRef("pk"), state=Annotation.State.SUBMITTED)
    if filters.label:
        documents = documents.filter(Exists(submitted.filter(spans__contains=[{"label": filters.label}])))
    latest = submitted.order_by("-submitted_at").values("submitted_at")[:1]
    documents = documents.annotate(last_submitted=Subquery(latest))
    return documents.order_by(*SORTS.get(filters.sort, SORTS["id"]))


def _latest_revision_kind() -> Subquery:
    return Subquery(AnnotationRevision.objects.filter(annotation=OuterRef("pk"))
                    .order_by("-created_at", "-id").values("kind")[:1])


def record_rows(*, user, project: Project, documents: list[Document]) -> list[dict]:
    """One row per record of a page of the list: ``document``, ``annotators`` (who has an annotation of it,
    each with its state; an annotator sees only their own), ``imported``, ``sent_back`` (reopened for
    correction and not resubmitted yet) and, for those who see every record, ``agreement`` of a record two
    or more people submitted (strict span F1 and token κ), else None."""
    ids = [document.pk for document in documents]
    annotations = (annotations_for(user=user, project=project).filter(document_id__in=ids)
                   .annotate(last_kind=_latest_revision_kind())
                   .order_by("document_id", "annotator__username")
                   .values_list("document_id", "annotator__username", "source", "state", "spans", "last_kind"))
    people: dict[int, list[dict]] = {pk: [] for pk in ids}
    imported, sent_back, submissions = set(), set(), {}
    for document_id, username, source, state, spans, last_kind in annotations:
        if source == Annotation.Source.IMPORT:
            imported.add(document_id)
        if username:
            people[document_id].append({"username": username, "state": state})
        if state == Annotation.State.DRAFT and last_kind == AnnotationRevision.Kind.SENT_BACK:
            sent_back.add(document_id)
        if source == Annotation.Source.HUMAN and state == Annotation.State.SUBMITTED and username:
            submissions.setdefault(document_id, {})[username] = list(gold_spans(spans))
    figures = {}
    if allows(user=user, project=project, action=Can.SEE_ALL_RECORDS):
        double = {pk: spans for pk, spans in submissions.items() if len(spans) >= 2}
        texts = dict(Document.objects.filter(pk__in=list(double)).values_list("pk", "text"))
        figures = records_agreement(project=project, records=[
            {"id": pk, "text": texts[pk], "spans": spans} for pk, spans in double.items()])
    return [{"document": document, "annotators": people[document.pk], "imported": document.pk in imported,
             "sent_back": document.pk in sent_back, "agreement": figures.get(document.pk)}
            for document in documents]


def open_correction(*, annotation: Annotation) -> dict | None:
    """The lead's request on a draft that was sent back for correction and not resubmitted yet: ``note``,
    ``by`` (username) and ``when``; None for any other annotation."""
    if annotation.state != Annotation.State.DRAFT:
        return None
    revision = annotation.revisions.order_by("-created_at", "-id").first()
    if revision is None or revision.kind != AnnotationRevision.Kind.SENT_BACK:
        return None
    return {"note": revision.note, "by": revision.username or gettext("a lead"), "when": revision.created_at}


def _changes(before: list[dict] | None, after: list[dict], text: str) -> list[dict]:
    """What changed from one version's spans to the next: spans added, removed, or relabelled in place."""
    old, new = set(gold_spans(before or [])), set(gold_spans(after))
    added, removed = new - old, old - new
    relabelled = {(span.start, span.end) for span in added} & {(span.start, span.end) for span in removed}
    changes = []
    for span in sorted(added | removed):
        where = (span.start, span.end)
        if where in relabelled and span in removed:
            continue
        kind = "relabelled" if where in relabelled else ("added" if span in added else "removed")
        previous = next((s.label for s in removed if (s.start, s.end) == where), None) if kind == "relabelled" else None
        changes.append({"kind": kind, "text": text[span.start:span.end], "label": span.label, "previous": previous,
                        "start": span.start, "end": span.end})
    return changes


def record_review(*, document: Document) -> dict:
    """What the review page shows of a record: its ``gold`` under the gold rule (None without gold) cut into
    ``segments`` for display, every ``annotation`` of it, the ``corrections`` asked for and not resubmitted yet,
    its ``history`` (each stored version, newest first, with who made it, why and what changed from the version
    before) and its audit ``events`` (reads left out)."""
    project = document.project
    annotations = list(document.annotations.select_related("annotator", "adjudicated_by").order_by("id"))
    submitted = sorted((a for a in annotations if a.state == Annotation.State.SUBMITTED),
                       key=lambda a: (a.submitted_at is not None, a.submitted_at, a.pk), reverse=True)
    gold = gold_of(status=document.status, annotations=[(a.source, a.spans) for a in submitted],
                   agreed_only=project.awaiting_adjudication == Project.Awaiting.AGREED)
    shown = [item for item in gold or [] if item.get("origin") != "silver"]
    gold_list = [{"text": document.text[s.start:s.end], "label": s.label, "start": s.start, "end": s.end}
                 for s in sorted(gold_spans(shown))]
    revisions = document.revisions.select_related("annotation__annotator", "assignee").order_by("created_at", "id")
    previous: dict[int, list[dict]] = {}
    history = []
    for revision in revisions:
        history.append({"revision": revision, "owner": revision.annotation.annotator,
                        "changes": _changes(previous.get(revision.annotation_id), revision.spans, document.text)
                        if revision.kind != AnnotationRevision.Kind.SENT_BACK else []})
        previous[revision.annotation_id] = revision.spans
    events = (AuditEvent.objects.filter(project_id=project.pk)
              .filter(Q(object_type="Document", object_id=str(document.pk))
                      | Q(object_type="Annotation", object_id__in=[str(a.pk) for a in annotations]))
              .exclude(action=AuditEvent.Action.VIEW).order_by("-created_at", "-id")[:200])
    corrections = [{"annotator": a.annotator, **found} for a in annotations
                   if (found := open_correction(annotation=a)) is not None]
    return {
        "corrections": corrections,
        "gold": gold_list if gold is not None else None,
        "segments": document_segments(text=document.text, spans=shown),
        "annotations": annotations,
        "history": history[::-1],
        "events": list(events),
    }
