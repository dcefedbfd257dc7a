"""Adjudication: from several people's submissions of one record to the record's gold.

When the last of the annotators a project asks for submits, the record is adjudicated automatically if the
submissions agree — every one the same spans, or, with the project's "majority" rule and three annotators or
more, every span decided by more than half of them (``corpus.adjudication.majority_spans``). Otherwise it
waits in the adjudication queue for a lead, an admin or an adjudicator who did not annotate it, who decides
it (``adjudicate``). Either way the gold is one annotation of its own (source "adjudicated", nobody's: its
``adjudicated_by`` says who decided, empty when it was automatic), and the record's status becomes
"adjudicated". The gold rule (``annotator.selectors.gold_of``) prefers it to every submission.

Writes lock the document's row first, like submissions, so a submission and an adjudication of one record
never interleave.
"""
from __future__ import annotations

from typing import Sequence

from django.db import transaction
from django.utils import timezone

from annotator.models import Annotation, AuditEvent, Document, Project
from annotator.permissions import judges_own_work
from annotator.selectors import submitted_spans
from annotator.services.audit import record_event
from annotator.services.queue import annotators_needed
from annotator.services.span_checks import SpanError, checked_spans
from corpus.adjudication import majority_spans, resolve
from corpus.span_json import write_span
from corpus.types import Span


class AdjudicationError(ValueError):
    """A record that cannot be adjudicated (not double-annotated, not complete) or spans that cannot be gold."""


class AdjudicatorConflict(PermissionError):
    """An adjudicator asked to decide a record they annotated themselves."""


def automatic_gold(project: Project, by_annotator: dict[str, Sequence[Span]]) -> list[Span] | None:
    """The gold that needs no person, or None: the submissions agree (or a majority decides, by the rule)."""
    if len(by_annotator) < 2:
        return None
    distinct = {tuple(sorted(set(spans))) for spans in by_annotator.values()}
    if len(distinct) == 1:
        return list(distinct.pop())
    if project.adjudication == Project.Adjudication.MAJORITY and len(by_annotator) >= 3:
        return majority_spans(by_annotator)
    return None


def _store(document: Document, spans: Sequence[Span], *, by, now) -> Annotation:
    stored = [write_span(span, origin="human", status="accepted") for span in spans]
    annotation, _ = Annotation.objects.update_or_create(
        document=document, source=Annotation.Source.ADJUDICATED,
        defaults={"annotator": None, "spans": stored, "state": Annotation.State.SUBMITTED, "submitted_at": now,
                  "adjudicated_by": by},
    )
    Document.objects.filter(pk=document.pk).update(status=Document.Status.ADJUDICATED)
    return annotation


def adjudicate_if_agreed(document: Document) -> Annotation | None:
    """Adjudicate a record whose submissions are complete and agree (called inside the last submission's
    transaction, which holds the document's row lock). Returns the gold annotation, or None."""
    project = document.project
    needed = annotators_needed(project=project, document=document)
    if needed < 2:
        return None
    by_annotator = submitted_spans(document=document)
    if len(by_annotator) < needed:
        return None
    gold = automatic_gold(project, by_annotator)
    if gold is None:
        return None
    annotation = _store(document, gold, by=None, now=timezone.now())
    record_event(user=None, action=AuditEvent.Action.ADJUDICATE, project=project, obj=annotation,
                 detail={"adjudicated": "automatically", "rule": project.adjudication,
                         "annotators": sorted(by_annotator)})
    return annotation


def _clean(document: Document, spans: Sequence[dict]) -> list[Span]:
    try:
        return [stored.span for stored in checked_spans(document=document, spans=spans)]
    except SpanError as error:
        raise AdjudicationError(str(error)) from None


@transaction.atomic
def adjudicate(*, document: Document, user, spans: Sequence[dict] | None = None,
               choices: Sequence[str | None] | None = None) -> Annotation:
    """Store the record's gold, decided by ``user`` (whose right to adjudicate the caller has checked with
    ``annotator.permissions``): ``spans`` as given, or ``choices`` — for each conflict of
    ``corpus.adjudication.conflicts`` in order, the annotator whose version to take, or None for no PHI there
    (the spans everybody marked are kept). Raises ``AdjudicationError`` for a record with fewer than two
    submissions, invalid spans or choices, ``AdjudicatorConflict`` for an adjudicator's own record. Deciding
    an adjudicated record again replaces its gold (the audit log keeps both decisions)."""
    if (spans is None) == (choices is None):
        raise AdjudicationError("send either the gold spans or one choice per conflict")
    locked = Document.objects.select_for_update(no_key=True).select_related("project").get(pk=document.pk)
    if judges_own_work(user=user, document=locked):
        raise AdjudicatorConflict("you annotated this record yourself: a lead or another adjudicator decides it")
    by_annotator = submitted_spans(document=locked)
    if len(by_annotator) < 2:
        raise AdjudicationError(f"record {locked.external_id} has {len(by_annotator)} submission(s); adjudication "
                                "needs two or more")
    if choices is not None:
        try:
            spans = [write_span(span) for span in resolve(by_annotator, list(choices))]
        except ValueError as error:
            raise AdjudicationError(str(error)) from None
    gold = _clean(locked, spans)
    annotation = _store(locked, gold, by=user, now=timezone.now())
    record_event(user=user, action=AuditEvent.Action.ADJUDICATE, project=locked.project, obj=annotation,
                 detail={"adjudicated": "by hand", "spans": len(gold), "annotators": sorted(by_annotator)})
    return annotation
