"""Handing out records: the best-ranked unassigned pool document under the current ranking.

Rows are claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` so concurrent annotators never receive the same
record (unless the project asks for N annotators per record); assignments abandoned for longer than the
project's timeout return to the pool.
"""
from __future__ import annotations

import hashlib
import operator
from dataclasses import dataclass
from datetime import timedelta
from functools import reduce

from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from annotator.models import Annotation, Assignment, Document, PoolScore, Project, Ranking
from annotator.selectors import record_tokens
from annotator.signals import complete_suggestions, suggestion_guards
from corpus.span_json import read_span, write_span


@dataclass(frozen=True)
class Handout:
    assignment: Assignment
    annotation: Annotation
    resumed: bool


def current_ranking(*, project: Project) -> Ranking | None:
    return Ranking.objects.filter(project=project, is_current=True).first()


def release_expired_assignments(*, project: Project, now=None) -> int:
    """Return abandoned records to the pool: their assignment and untouched draft go, the document is free.

    Runs under row locks (the documents, then the annotations, then the assignments), every one taken with
    SKIP LOCKED, so it never waits for a hand-out, save or submit, nor deadlocks with one: a record whose row
    is locked right now is in use, not abandoned, and is left for a later pass. Expiry and the draft are
    checked again under the locks, so an assignment extended by a save in the meantime stays, and a draft
    that was ever saved (version > 1) or submitted is never deleted — the next person starts from the
    suggestions again, but nothing the first person saved is lost.
    """
    now = now or timezone.now()
    expired = Assignment.objects.filter(
        document__project=project, completed_at__isnull=True, expires_at__lt=now
    )
    # Inside a hand-out's transaction it needs no savepoint of its own: an error here ends the hand-out too.
    with transaction.atomic(savepoint=False):
        documents = list(
            Document.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(pk__in=expired.values("document_id"))
            .order_by("pk").values_list("pk", flat=True)
        )
        if not documents:
            return 0
        pairs = set(expired.filter(document_id__in=documents).values_list("document_id", "annotator_id"))
        if not pairs:
            return 0
        of_pairs = Annotation.objects.filter(_pairs_q(pairs))
        drafts = {
            (document_id, annotator_id): (pk, state, version)
            for pk, document_id, annotator_id, state, version in of_pairs.select_for_update(skip_locked=True)
            .values_list("pk", "document_id", "annotator_id", "state", "version")
        }
        # An annotation that could not be locked is being saved or submitted: its record is in use.
        busy = set(of_pairs.values_list("document_id", "annotator_id")) - set(drafts)
        free = pairs - busy
        if not free:
            return 0
        released = list(
            expired.filter(_pairs_q(free)).select_for_update(skip_locked=True, of=("self",))
            .values_list("id", "document_id", "annotator_id")
        )
        untouched = [
            pk for pk, state, version in (drafts.get(row[1:]) for row in released if row[1:] in drafts)
            if state == Annotation.State.DRAFT and version == 1
        ]
        Annotation.objects.filter(pk__in=untouched).delete()
        Assignment.objects.filter(id__in=[row[0] for row in released]).delete()
        touched = {row[1] for row in released}
        # A record goes back to the pool when fewer people than it needs have it (open or done).
        holders = dict(
            Assignment.objects.filter(document_id__in=touched).values("document_id").annotate(n=Count("id"))
            .values_list("document_id", "n")
        )
        wanted = dict(Document.objects.filter(id__in=touched).values_list("id", "annotators_wanted"))
        back = [pk for pk in touched if holders.get(pk, 0) < _needed(project, wanted.get(pk))]
        Document.objects.filter(id__in=back, status=Document.Status.ASSIGNED).update(status=Document.Status.POOL)
    return len(released)


def _needed(project: Project, wanted: int | None) -> int:
    return max(wanted or 0, project.annotators_per_document, 1)


def annotators_needed(*, project: Project, document: Document) -> int:
    """How many people a record is for: the project's "annotators per record", or two for a record drawn for
    control (``Project.control_rate``) in a project that asks for one."""
    return _needed(project, document.annotators_wanted)


def drawn_for_control(*, project: Project, document: Document) -> bool:
    """Whether a record of a one-annotator project goes to a second annotator as well: a draw at the
    project's control rate, the same for a record every time (a hash of the project and the record)."""
    if project.control_rate <= 0 or project.annotators_per_document > 1:
        return False
    digest = hashlib.sha256(f"deidloop-control:{project.pk}:{document.pk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < project.control_rate


def _pairs_q(pairs) -> Q:
    """Rows of these (document id, annotator id) pairs."""
    return reduce(operator.or_, (Q(document_id=document, annotator_id=annotator) for document, annotator in pairs))


def _open_assignment(*, project: Project, user) -> Assignment | None:
    return (
        Assignment.objects.filter(
            document__project=project, annotator=user, completed_at__isnull=True, expires_at__gte=timezone.now()
        ).select_related("document").order_by("assigned_at").first()
    )


def _eligible(*, project: Project, user):
    """Pool documents this annotator has not had and that still need an annotator.

    With N annotators per record, a record is full when N people have it, open or submitted: one whose
    first annotator submitted while the second still works on it needs nobody else.
    """
    documents = Document.objects.filter(
        project=project, role=Document.Role.POOL, status__in=[Document.Status.POOL, Document.Status.ASSIGNED]
    ).exclude(assignments__annotator=user)
    if project.annotators_per_document <= 1:
        # A record stays in the pool until it has the people it needs (two for one drawn for control).
        return documents.filter(status=Document.Status.POOL)
    holders = Assignment.objects.filter(document=OuterRef("pk")).values("document").annotate(n=Count("id")).values("n")
    return documents.annotate(taken=Coalesce(Subquery(holders), 0)).filter(taken__lt=project.annotators_per_document)


def records_waiting(*, project: Project, user) -> bool:
    """Whether a record could be handed to this annotator now (a read: nothing is claimed)."""
    return _eligible(project=project, user=user).exists()


# Every hand-out runs this, so it is written out: composed through the ORM (an anti-join, an EXISTS, a
# sub-select and a row lock), building the statement took several times longer than PostgreSQL takes to run
# it. It walks the current ranking in rank order (index on ranking, rank), skips what this annotator has had
# or what is full (N people have it, open or submitted), and locks the first free document; SKIP LOCKED
# passes over rows that concurrent hand-outs are claiming.
_CLAIM_RANKED_SQL = """
SELECT d.*, s.pre_annotations AS stored_pre_annotations,
       EXISTS (SELECT 1 FROM {annotation} a WHERE a.document_id = d.id AND a.annotator_id = %(user)s)
           AS has_annotation
FROM {score} s
JOIN {document} d ON d.id = s.document_id
WHERE s.ranking_id = (SELECT r.id FROM {ranking} r WHERE r.project_id = %(project)s AND r.is_current)
  AND d.project_id = %(project)s AND d.role = %(role)s AND d.status = ANY(%(statuses)s)
  AND NOT EXISTS (SELECT 1 FROM {assignment} x WHERE x.document_id = d.id AND x.annotator_id = %(user)s)
  AND (%(per_document)s <= 1 OR (
        SELECT count(*) FROM {assignment} o WHERE o.document_id = d.id
      ) < %(per_document)s)
ORDER BY s.rank, s.document_id
LIMIT 1
FOR UPDATE OF d SKIP LOCKED
""".format(
    annotation=Annotation._meta.db_table, score=PoolScore._meta.db_table, document=Document._meta.db_table,
    ranking=Ranking._meta.db_table, assignment=Assignment._meta.db_table,
)


def _claim_ranked(*, project: Project, user) -> tuple[Document, dict, bool] | None:
    """Lock the best-ranked available document of the current ranking, with its stored pre-annotations."""
    per_document = project.annotators_per_document
    statuses = [Document.Status.POOL] + ([Document.Status.ASSIGNED] if per_document > 1 else [])
    rows = list(Document.objects.raw(_CLAIM_RANKED_SQL, {
        "project": project.pk, "user": user.pk, "role": Document.Role.POOL, "statuses": statuses,
        "per_document": per_document,
    }))
    if not rows:
        return None
    document = rows[0]
    # A column outside the model's fields comes back as the database sent it; the field decodes it.
    stored = PoolScore._meta.get_field("pre_annotations").from_db_value(
        document.stored_pre_annotations, None, connection
    )
    return document, stored or {}, document.has_annotation


def _claim_unranked(*, project: Project, user) -> tuple[Document, dict, bool] | None:
    """Lock an available document the current ranking does not score (all of them before the first
    ranking, picked at random then; afterwards the ones imported since, oldest first)."""
    ranking = current_ranking(project=project)
    candidates = _eligible(project=project, user=user)
    if ranking is not None:
        candidates = candidates.exclude(pool_scores__ranking=ranking).order_by("id")
    else:
        candidates = candidates.order_by("?")
    mine = Annotation.objects.filter(document=OuterRef("pk"), annotator=user)
    document = (
        candidates.annotate(has_annotation=Exists(mine)).select_for_update(skip_locked=True, of=("self",)).first()
    )
    if document is None:
        return None
    return document, {}, document.has_annotation


def _one_hand_out_at_a_time(*, project: Project, user) -> None:
    """Serialise this annotator's hand-outs in this project until the transaction ends.

    Two requests of one person at once (a double click, two tabs) would both find no open record and claim
    two; the second one waits here and then resumes what the first handed out.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                       [f"deidloop.next_record:{project.pk}:{user.pk}"])


@transaction.atomic
def next_record(*, project: Project, user) -> Handout | None:
    """The record this annotator should work on now: their open one, else the best-ranked free one."""
    _one_hand_out_at_a_time(project=project, user=user)
    release_expired_assignments(project=project)
    open_assignment = _open_assignment(project=project, user=user)
    if open_assignment is not None:
        document = open_assignment.document
        annotation = Annotation.objects.get(document=document, annotator=user)
        annotation.document, document.project = document, project
        return Handout(assignment=open_assignment, annotation=annotation, resumed=True)

    claimed = _claim_ranked(project=project, user=user) or _claim_unranked(project=project, user=user)
    if claimed is None:
        return None
    document, stored, has_annotation = claimed
    document.project = project
    now = timezone.now()
    assignment = Assignment.objects.create(
        document=document, annotator=user, expires_at=now + timedelta(minutes=project.assignment_timeout_minutes)
    )
    if document.annotators_wanted is None and drawn_for_control(project=project, document=document):
        document.annotators_wanted = 2
        Document.objects.filter(pk=document.pk).update(annotators_wanted=2)
    # The record leaves the pool when it has the people it needs (open or submitted): with one, at once.
    # Its token count (for the cost fits and the record list) is stored with it the first time it is handed out.
    counted = {} if document.n_tokens is not None else {"n_tokens": record_tokens(document=document)[1]}
    needed = annotators_needed(project=project, document=document)
    if needed <= 1 or Assignment.objects.filter(document=document).count() >= needed:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.ASSIGNED, **counted)
    elif counted:
        Document.objects.filter(pk=document.pk).update(**counted)
    document.n_tokens = counted.get("n_tokens", document.n_tokens)
    # A draft with edits survives an expired assignment; the same person getting the record back resumes it.
    annotation = Annotation.objects.get(document=document, annotator=user) if has_annotation else None
    if annotation is None:
        suggestions, possible_missed = _pre_annotations(stored, text=document.text, project=project)
        annotation = Annotation.objects.create(
            document=document, annotator=user, source=Annotation.Source.HUMAN, state=Annotation.State.DRAFT,
            spans=[{**span, "origin": "model", "status": "pending"} for span in suggestions],
            suggested=suggestions, possible_missed=possible_missed,
        )
    annotation.document = document
    return Handout(assignment=assignment, annotation=annotation, resumed=False)


def _pre_annotations(stored: dict, *, text: str, project: Project) -> tuple[list[dict], list]:
    """The stored suggestions that the draft shows, completed from the record's text by another app (every
    mention of a tagged string, structured PHI by pattern), less those another app hides (eponyms), read at
    hand-out so a project's list of eponyms counts from the moment it is saved."""
    stored = complete_suggestions(project=project, text=text, stored=stored)
    guards = suggestion_guards(project=project) if stored.get("spans") else []
    spans = []
    for item in stored.get("spans", []):
        span = read_span(item)
        if not any(hide(text, span) for hide in guards):
            spans.append({**write_span(span), "confidence": item.get("confidence")})
    return spans, list(stored.get("possible_missed", []))


class NotAssigned(Exception):
    """A save or submit of a record that is not (or no longer) assigned to the annotation's author."""


def hold_assignment(*, document: Document, user) -> Assignment:
    """The user's assignment of ``document``, checked before their draft is saved or submitted.

    The caller holds the user's annotation row locked, so expiry cannot release the assignment meanwhile
    (``release_expired_assignments`` passes over a locked annotation).

    - An assignment of the user is theirs even past its expiry time while nobody released it: no one else
      has been handed the record since.
    - Released (the assignment expired, and an edited draft survived it): the record is taken again, under
      the document's row lock, when it is still free — still in the pool and had by fewer people than it
      needs. Nothing is lost then: the draft is saved or submitted as if the assignment had never lapsed.
    - Otherwise (the record was handed to someone else meanwhile, or completed) ``NotAssigned``, with a
      message for the annotator; their draft stays as last saved.
    """
    mine = Assignment.objects.select_for_update().filter(document=document, annotator=user).first()
    if mine is not None:
        return mine
    project = document.project
    locked = Document.objects.select_for_update(no_key=True).get(pk=document.pk)
    mine = Assignment.objects.filter(document=locked, annotator=user).first()  # handed out again meanwhile
    if mine is not None:
        return mine
    needed = annotators_needed(project=project, document=locked)
    holders = Assignment.objects.filter(document=locked).count()
    if locked.role != Document.Role.POOL or locked.status not in (Document.Status.POOL, Document.Status.ASSIGNED):
        raise NotAssigned(
            "This record is no longer assigned to you: your assignment expired and the record has been "
            "completed since. Your draft is kept as last saved but can no longer be changed or submitted; "
            "open the next record."
        )
    if holders >= needed:
        raise NotAssigned(
            "This record is no longer assigned to you: your assignment expired and the record was handed to "
            "another annotator. Your draft is kept as last saved but can no longer be changed or submitted; "
            "open the next record."
        )
    mine = Assignment.objects.create(
        document=locked, annotator=user,
        expires_at=timezone.now() + timedelta(minutes=project.assignment_timeout_minutes),
    )
    if holders + 1 >= needed:
        Document.objects.filter(pk=locked.pk).update(status=Document.Status.ASSIGNED)
    return mine


def extend_assignment(*, annotation: Annotation) -> None:
    """Activity on a record keeps it assigned (never for less time than it had: a record sent back for
    correction waits longer than the project's timeout)."""
    project = annotation.document.project
    Assignment.objects.filter(
        document=annotation.document, annotator=annotation.annotator, completed_at__isnull=True
    ).update(expires_at=Greatest(F("expires_at"),
                                 timezone.now() + timedelta(minutes=project.assignment_timeout_minutes)))
