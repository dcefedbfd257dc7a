"""Handing out records: the best-ranked unassigned pool document under the current ranking.

Rows are claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` so concurrent annotators never receive the same
record (unless the project asks for N annotators per record); assignments abandoned for longer than the
project's timeout return to the pool.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotator.models import Annotation, Assignment, Document, PoolScore, Project, Ranking
from corpus.span_json import read_span, write_span


@dataclass(frozen=True)
class Handout:
    assignment: Assignment
    annotation: Annotation
    resumed: bool


def current_ranking(*, project: Project) -> Ranking | None:
    return Ranking.objects.filter(project=project, is_current=True).first()


def release_expired_assignments(*, project: Project, now=None) -> int:
    """Return abandoned records to the pool: their assignment and untouched draft go, the document is free."""
    now = now or timezone.now()
    expired = Assignment.objects.filter(
        document__project=project, completed_at__isnull=True, expires_at__lt=now
    )
    pairs = list(expired.values_list("id", "document_id", "annotator_id"))
    if not pairs:
        return 0
    for _id, document_id, annotator_id in pairs:
        # A draft keeps its edits: the next person to get the record starts from the suggestions again,
        # but nothing the first person typed is deleted.
        Annotation.objects.filter(
            document_id=document_id, annotator_id=annotator_id, state=Annotation.State.DRAFT, version=1
        ).delete()
    Assignment.objects.filter(id__in=[pair[0] for pair in pairs]).delete()
    still_assigned = Assignment.objects.filter(completed_at__isnull=True).values("document_id")
    Document.objects.filter(id__in={pair[1] for pair in pairs}, status=Document.Status.ASSIGNED).exclude(
        id__in=still_assigned
    ).update(status=Document.Status.POOL)
    return len(pairs)


def _open_assignment(*, project: Project, user) -> Assignment | None:
    return (
        Assignment.objects.filter(
            document__project=project, annotator=user, completed_at__isnull=True, expires_at__gte=timezone.now()
        ).select_related("document").order_by("assigned_at").first()
    )


def _eligible(*, project: Project, user):
    """Pool documents this annotator has not had and that still need an annotator."""
    documents = Document.objects.filter(
        project=project, role=Document.Role.POOL, status__in=[Document.Status.POOL, Document.Status.ASSIGNED]
    ).exclude(assignments__annotator=user)
    if project.annotators_per_document <= 1:
        return documents.filter(status=Document.Status.POOL)
    open_assignments = (
        Assignment.objects.filter(document=OuterRef("pk"), completed_at__isnull=True)
        .values("document").annotate(n=Count("id")).values("n")
    )
    return documents.annotate(taken=Coalesce(Subquery(open_assignments), 0)).filter(
        taken__lt=project.annotators_per_document
    )


# Every hand-out runs this, so it is written out: composed through the ORM (an anti-join, an EXISTS, a
# sub-select and a row lock), building the statement took several times longer than PostgreSQL takes to run
# it. It walks the current ranking in rank order (index on ranking, rank), skips what this annotator has had
# or what is full, and locks the first free document; SKIP LOCKED passes over rows that concurrent
# hand-outs are claiming.
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
        SELECT count(*) FROM {assignment} o WHERE o.document_id = d.id AND o.completed_at IS NULL
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


@transaction.atomic
def next_record(*, project: Project, user) -> Handout | None:
    """The record this annotator should work on now: their open one, else the best-ranked free one."""
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
    # With one annotator per record this hand-out fills it; with more, count who has it open.
    if project.annotators_per_document <= 1 or (
        Assignment.objects.filter(document=document, completed_at__isnull=True).count()
        >= project.annotators_per_document
    ):
        Document.objects.filter(pk=document.pk).update(status=Document.Status.ASSIGNED)
    # A draft with edits survives an expired assignment; the same person getting the record back resumes it.
    annotation = Annotation.objects.get(document=document, annotator=user) if has_annotation else None
    if annotation is None:
        suggestions, possible_missed = _pre_annotations(stored)
        annotation = Annotation.objects.create(
            document=document, annotator=user, source=Annotation.Source.HUMAN, state=Annotation.State.DRAFT,
            spans=[{**span, "origin": "model", "status": "pending"} for span in suggestions],
            suggested=suggestions, possible_missed=possible_missed,
        )
    annotation.document = document
    return Handout(assignment=assignment, annotation=annotation, resumed=False)


def _pre_annotations(stored: dict) -> tuple[list[dict], list]:
    spans = [{**write_span(read_span(s)), "confidence": s.get("confidence")} for s in stored.get("spans", [])]
    return spans, list(stored.get("possible_missed", []))


def extend_assignment(*, annotation: Annotation) -> None:
    """Activity on a record keeps it assigned."""
    project = annotation.document.project
    Assignment.objects.filter(
        document=annotation.document, annotator=annotation.annotator, completed_at__isnull=True
    ).update(expires_at=timezone.now() + timedelta(minutes=project.assignment_timeout_minutes))
