"""Saving drafts and submitting annotations, with optimistic concurrency on the version edited.

A save or submit names the version it edited. If the stored annotation has moved on (another tab, another
person), the write is refused with ``StaleAnnotation`` — never a silent overwrite. Submitting the same
spans twice is harmless: the second call returns the first result.

A save or submit is accepted only from the record's assignee (``queue.hold_assignment``: an assignment that
lapsed is taken again while the record is still free) or from a lead or admin of the project; anyone else is
refused with ``NotAssigned``, so a record handed to a second person after an expiry never ends with two
gold annotations, the later silently replacing the earlier.

Saves and submits lock in one order — the annotation row, then the document row, then the assignment
row; hand-outs and ``queue.release_expired_assignments`` skip rows that are locked, so none of them
deadlocks with another.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from django.db import transaction
from django.utils import timezone

from annotator.corrections import Corrections, count_corrections
from annotator.models import Annotation, AnnotationRevision, Assignment, AuditEvent, Document
from annotator.services.adjudication import adjudicate_if_agreed
from annotator.services.audit import record_event
from annotator.permissions import can_manage
from annotator.selectors import record_tokens
from annotator.services.queue import NotAssigned, annotators_needed, extend_assignment, hold_assignment
from annotator.services.review import record_revision
from annotator.services.span_checks import SpanError, checked_spans
from corpus.span_json import read_span

MAX_ACTIVE_SECONDS_PER_SAVE = 3600.0


class AnnotationError(ValueError):
    """Spans that cannot be stored (out of range, unknown label, forbidden overlap) or a closed record."""


class StaleAnnotation(Exception):
    def __init__(self, current_version: int) -> None:
        self.current_version = current_version
        super().__init__(
            "This record was changed in another tab or by someone else since you opened it "
            f"(now at version {current_version}). Reload to see the current version."
        )


@dataclass(frozen=True)
class SaveResult:
    annotation: Annotation
    corrections: Corrections | None = None
    repeated: bool = False


def _clean_spans(*, annotation: Annotation, spans: Sequence[dict]) -> list[dict]:
    try:
        return [s.to_json() for s in checked_spans(document=annotation.document, spans=spans)]
    except SpanError as error:
        raise AnnotationError(str(error)) from None


def _active(seconds) -> float:
    try:
        value = float(seconds or 0)
    except (TypeError, ValueError):
        raise AnnotationError("active_seconds must be a number") from None
    return min(max(value, 0.0), MAX_ACTIVE_SECONDS_PER_SAVE)


def _locked(annotation_id: int, user) -> Annotation:
    annotation = (
        Annotation.objects.select_for_update(of=("self",)).select_related("document__project")
        .filter(pk=annotation_id, annotator=user).first()
    )
    if annotation is None:
        raise Annotation.DoesNotExist(f"no annotation {annotation_id} of yours")
    return annotation


def _check_assignee(annotation: Annotation, user) -> None:
    """Refuse a write from someone the record is not assigned to (leads and admins may always write)."""
    try:
        hold_assignment(document=annotation.document, user=user)
    except NotAssigned:
        if not can_manage(user=user, project=annotation.document.project):
            raise


@transaction.atomic
def save_draft(*, annotation_id: int, user, version: int, spans: Sequence[dict], active_seconds=0) -> SaveResult:
    annotation = _locked(annotation_id, user)
    if annotation.state == Annotation.State.SUBMITTED:
        raise StaleAnnotation(annotation.version)
    if annotation.version != version:
        raise StaleAnnotation(annotation.version)
    _check_assignee(annotation, user)
    annotation.spans = _clean_spans(annotation=annotation, spans=spans)
    annotation.active_seconds += _active(active_seconds)
    annotation.version += 1
    annotation.save(update_fields=["spans", "active_seconds", "version", "updated_at"])
    extend_assignment(annotation=annotation)
    return SaveResult(annotation=annotation)


@transaction.atomic
def submit(*, annotation_id: int, user, version: int, spans: Sequence[dict], active_seconds=0) -> SaveResult:
    """Store the annotation as gold and close the assignment; the record is done when enough people submitted.

    Refused with ``StaleAnnotation`` when the version moved on, ``AnnotationError`` for invalid spans and
    ``NotAssigned`` when the record is not the user's (see the module's docstring): an annotator whose
    assignment expired submits as usual if the record was not handed to anybody else meanwhile (it is taken
    again), and is refused if it was.
    """
    annotation = _locked(annotation_id, user)
    final = [{**span, "origin": "human", "status": "accepted"}
             for span in _clean_spans(annotation=annotation, spans=spans)]
    if annotation.state == Annotation.State.SUBMITTED:
        same = [read_span(s) for s in annotation.spans] == [read_span(s) for s in final]
        if same and version in (annotation.version - 1, annotation.version):
            return SaveResult(annotation=annotation, corrections=_stored_corrections(annotation), repeated=True)
        raise StaleAnnotation(annotation.version)
    if annotation.version != version:
        raise StaleAnnotation(annotation.version)
    # The document's row lock serialises the submissions of one record: with two annotators per record,
    # each counts the other's submission, and the last one marks the record done. (FOR NO KEY UPDATE: rows
    # that only refer to the document, a pool score or a silver sentence being written, are not held up.)
    Document.objects.select_for_update(no_key=True).only("pk").get(pk=annotation.document_id)
    _check_assignee(annotation, user)
    corrections = count_corrections(annotation.suggested, final)
    now = timezone.now()
    annotation.spans = final
    annotation.state = Annotation.State.SUBMITTED
    annotation.version += 1
    annotation.active_seconds += _active(active_seconds)
    annotation.submitted_at = now
    annotation.fn_fixes = corrections.fn_fixes
    annotation.fp_fixes = corrections.fp_fixes
    annotation.relabels = corrections.relabels
    annotation.boundary_changes = corrections.boundary_changes
    annotation.save(update_fields=[
        "spans", "state", "version", "active_seconds", "submitted_at", "fn_fixes", "fp_fixes", "relabels",
        "boundary_changes", "updated_at",
    ])
    record_revision(annotation=annotation, kind=AnnotationRevision.Kind.SUBMITTED, by=user)
    Assignment.objects.filter(
        document=annotation.document, annotator=user, completed_at__isnull=True
    ).update(completed_at=now)
    document = annotation.document
    if document.n_tokens is None:  # the cost of a record is fitted on its token count
        Document.objects.filter(pk=document.pk).update(n_tokens=record_tokens(document=document)[1])
    # With one annotator per record this submission completes it; with more, count the submissions.
    # With two or more, the last one also adjudicates the record when the submissions agree.
    needed = annotators_needed(project=document.project, document=document)  # read with the annotation, above
    submitted = Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED,
                                          source=Annotation.Source.HUMAN)
    if needed <= 1 or submitted.count() >= needed:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.SUBMITTED)
        adjudicate_if_agreed(document)
    record_event(user=user, action=AuditEvent.Action.EDIT, project=document.project, obj=annotation,
                 detail={"submitted": True, "version": annotation.version, **corrections.as_dict()})
    transaction.on_commit(lambda: _announce_submission(annotation))
    return SaveResult(annotation=annotation, corrections=corrections)


def _stored_corrections(annotation: Annotation) -> Corrections:
    return Corrections(
        fn_fixes=annotation.fn_fixes, fp_fixes=annotation.fp_fixes, relabels=annotation.relabels,
        boundary_changes=annotation.boundary_changes,
    )


def _announce_submission(annotation: Annotation) -> None:
    from annotator.signals import annotation_submitted

    annotation_submitted.send(sender=Annotation, annotation=annotation)
