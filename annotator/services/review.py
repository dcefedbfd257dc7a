"""Reviewing submitted records: a record's version history, sending it back for correction, a lead's fix.

- ``record_revision`` stores one state of an annotation in its history (each submission, return and fix).
- ``send_back`` reopens a submitted record to its annotator — or hands it to another member, starting from the
  submitted spans — with the lead's note: it is their open record (next in their queue), the workbench shows
  the note, and their submission makes it gold again through ``annotations.submit`` as usual.
- ``fix_record`` lets a lead or admin change a record's gold directly.

Writes lock rows in the order submissions do — the record's annotation rows, then the document row, then
assignments — so none of them deadlocks with a save, a submit or a hand-out. Every change is audited.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotator.models import Annotation, AnnotationRevision, Assignment, AuditEvent, Document
from annotator.permissions import Can, allows
from annotator.services.audit import record_event
from annotator.services.span_checks import SpanError, checked_spans
from corpus.span_json import gold_spans
from corpus.text import tokenize

#: How long a record sent back waits for the person it is sent to; working on it keeps it theirs as usual.
CORRECTION_WAIT = timedelta(days=14)
NOTE_LIMIT = 2000


class ReviewError(ValueError):
    """A send-back or fix that cannot be done, with the reason; ``field`` names the form field it is about."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def record_revision(*, annotation: Annotation, kind: str, by, note: str = "", assignee=None) -> AnnotationRevision:
    """Store the annotation as it is now in its record's history."""
    known = by if getattr(by, "is_authenticated", False) else None
    return AnnotationRevision.objects.create(
        annotation=annotation, document_id=annotation.document_id, version=annotation.version, kind=kind,
        spans=annotation.spans, user=known, username=known.get_username() if known else "", assignee=assignee,
        note=note,
    )


def count_tokens(*, document_ids: Iterable[int]) -> dict[int, int]:
    """Token counts of these records (the workbench's tokenizer), counted once: those not counted yet are
    tokenized and stored, in chunks. Returns id → count for every id given."""
    ids = list(document_ids)
    counts = dict(Document.objects.filter(pk__in=ids, n_tokens__isnull=False).values_list("pk", "n_tokens"))
    missing = [pk for pk in ids if pk not in counts]
    for start in range(0, len(missing), 200):
        chunk = Document.objects.filter(pk__in=missing[start:start + 200]).only("pk", "text")
        counted = [Document(pk=document.pk, n_tokens=len(tokenize(document.text))) for document in chunk]
        Document.objects.bulk_update(counted, ["n_tokens"])
        counts.update((document.pk, document.n_tokens) for document in counted)
    return counts


def _clean_note(note: str) -> str:
    note = (note or "").strip()
    if not note:
        raise ReviewError(gettext("Say what should be corrected: the note is shown to the annotator."), field="note")
    if len(note) > NOTE_LIMIT:
        raise ReviewError(gettext('The note is %(length)s characters long; keep it under %(NOTE_LIMIT)s.') % {"length": len(note), "NOTE_LIMIT": NOTE_LIMIT}, field="note")
    return note


def _locked_record(document: Document) -> tuple[Document, list[Annotation]]:
    """The record's submitted annotations and its document, locked in that order (as a submit locks them);
    refused when a submission arrived between the two locks."""
    submitted = list(Annotation.objects.select_for_update(of=("self",))
                     .filter(document_id=document.pk, state=Annotation.State.SUBMITTED).order_by("id"))
    locked = Document.objects.select_for_update(no_key=True).select_related("project").get(pk=document.pk)
    now_submitted = set(Annotation.objects.filter(document=locked, state=Annotation.State.SUBMITTED)
                        .values_list("pk", flat=True))
    if now_submitted != {annotation.pk for annotation in submitted}:
        raise ReviewError(gettext("The record changed while you were looking at it: reload the page."))
    return locked, submitted


def _gold_annotation(document: Document, submitted: Sequence[Annotation]) -> Annotation | None:
    """The annotation that holds the record's gold, by the gold rule (``annotator.selectors.gold_of``):
    the adjudicated one, else the newest imported one, else the single submission of a completed record."""
    newest_first = sorted(submitted, key=lambda a: (a.submitted_at is not None, a.submitted_at, a.pk), reverse=True)
    for source in (Annotation.Source.ADJUDICATED, Annotation.Source.IMPORT):
        for annotation in newest_first:
            if annotation.source == source:
                return annotation
    human = [a for a in submitted if a.source == Annotation.Source.HUMAN]
    done = document.status in (Document.Status.SUBMITTED, Document.Status.ADJUDICATED)
    return human[0] if len(human) == 1 and done else None


@transaction.atomic
def send_back(*, document: Document, by, to, note: str) -> Annotation:
    """Reopen a submitted record to ``to`` with ``note``: their annotation of it becomes a draft again, or —
    sent to a member who has none — a draft of theirs starts from the submitted spans, and the first
    annotator's submission stops counting (it is kept as a draft they can no longer submit). Returns the
    draft to correct. ``by`` must manage the project (the caller checks it with ``annotator.permissions``).

    Refused (``ReviewError``) for a record not submitted, whose gold was adjudicated or imported (a lead fixes
    those directly), sent to someone who may not annotate in the project, or to another member when several
    people annotated the record."""
    note = _clean_note(note)
    locked, submitted = _locked_record(document)
    project = locked.project
    if to is None or not allows(user=to, project=project, action=Can.ANNOTATE):
        raise ReviewError(gettext("Choose a member of the project who annotates."), field="to")
    if locked.status not in (Document.Status.SUBMITTED, Document.Status.ADJUDICATED):
        raise ReviewError(gettext('Only a submitted record can be sent back; this one is %(status)s.') % {"status": locked.get_status_display()})
    sources = {annotation.source for annotation in submitted}
    if Annotation.Source.ADJUDICATED in sources:
        raise ReviewError(gettext("This record's gold was adjudicated: fix it here directly, or decide it again."))
    if Annotation.Source.IMPORT in sources:
        raise ReviewError(gettext("This record's gold was imported, nobody annotated it here: fix it here directly."))
    human = [annotation for annotation in submitted if annotation.source == Annotation.Source.HUMAN]
    own = next((annotation for annotation in human if annotation.annotator_id == to.pk), None)
    now = timezone.now()
    if own is not None:
        draft, first = own, own
        draft.state = Annotation.State.DRAFT
        draft.version += 1  # a tab still showing the submission is refused as stale
        draft.save(update_fields=["state", "version", "updated_at"])
    else:
        if len(human) != 1:
            raise ReviewError(gettext("Several people annotated this record: send it back to one of them."), field="to")
        first = human[0]
        if Annotation.objects.filter(document=locked, annotator=to).exists():
            raise ReviewError(gettext('%(name)s already has a draft of this record: send it to someone else.') % {"name": to.get_username()},
                              field="to")
        first.state = Annotation.State.DRAFT
        first.version += 1
        first.save(update_fields=["state", "version", "updated_at"])
        Assignment.objects.filter(document=locked, annotator_id=first.annotator_id).delete()
        # Version 2: a draft that was ever written is never deleted when its assignment lapses.
        draft = Annotation.objects.create(
            document=locked, annotator=to, source=Annotation.Source.HUMAN, state=Annotation.State.DRAFT,
            spans=first.spans, suggested=first.spans, possible_missed=first.possible_missed, version=2,
        )
    Assignment.objects.update_or_create(
        document=locked, annotator=to,
        defaults={"assigned_at": now, "completed_at": None, "expires_at": now + CORRECTION_WAIT},
    )
    Document.objects.filter(pk=locked.pk).update(status=Document.Status.ASSIGNED)
    draft.document = locked
    record_revision(annotation=draft, kind=AnnotationRevision.Kind.SENT_BACK, by=by, note=note, assignee=to)
    record_event(user=by, action=AuditEvent.Action.EDIT, project=project, obj=draft, detail={
        "sent_back": True, "to": to.get_username(),
        "submitted_by": first.annotator.get_username() if first.annotator else "", "note": note,
        "version": draft.version,
    })
    return draft


@transaction.atomic
def fix_record(*, document: Document, by, spans: Sequence[dict], note: str = "") -> Annotation | None:
    """Replace a record's gold with ``spans``, as a lead or admin (the caller checks the role): the annotation
    holding the gold takes the spans as a new version, in the record's history and the audit log. Returns it,
    or None when the spans are the gold already (nothing is written). ``ReviewError`` for a record without
    gold (not submitted, or awaiting adjudication) and for spans that cannot be stored."""
    locked, submitted = _locked_record(document)
    gold = _gold_annotation(locked, submitted)
    if gold is None:
        raise ReviewError(gettext("This record has no gold to fix: it is not submitted yet, or awaits adjudication."))
    try:
        final = [{**stored.to_json(), "origin": "human", "status": "accepted"}
                 for stored in checked_spans(document=locked, spans=spans)]
    except SpanError as error:
        raise ReviewError(str(error), field="spans") from None
    before, after = set(gold_spans(gold.spans)), set(gold_spans(final))
    if before == after:
        return None
    gold.spans = final
    gold.version += 1
    gold.save(update_fields=["spans", "version", "updated_at"])
    gold.document = locked
    note = (note or "").strip()[:NOTE_LIMIT]
    record_revision(annotation=gold, kind=AnnotationRevision.Kind.FIXED, by=by, note=note)
    record_event(user=by, action=AuditEvent.Action.EDIT, project=locked.project, obj=gold, detail={
        "fixed": True, "version": gold.version, "added": len(after - before), "removed": len(before - after),
        **({"note": note} if note else {}),
    })
    return gold
