"""Handing out records: the best-ranked unassigned pool document under the current ranking.

Rows are claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` so concurrent annotators never receive the same
record (unless the project asks for N annotators per record); assignments abandoned for longer than the
project's timeout return to the pool.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotator.models import Annotation, Assignment, Document, PoolScore, Project, Ranking


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


def _eligible(queryset, *, project: Project, user, through: str = ""):
    """Restrict ``queryset`` (of documents, or of rows reaching a document through ``through``) to pool
    records this annotator has not had and that still need an annotator."""
    prefix = f"{through}__" if through else ""
    queryset = queryset.filter(**{
        f"{prefix}project": project, f"{prefix}role": Document.Role.POOL,
        f"{prefix}status__in": [Document.Status.POOL, Document.Status.ASSIGNED],
    }).exclude(**{f"{prefix}assignments__annotator": user})
    if project.annotators_per_document <= 1:
        return queryset.filter(**{f"{prefix}status": Document.Status.POOL})
    open_assignments = (
        Assignment.objects.filter(document=OuterRef(through or "pk"), completed_at__isnull=True)
        .values("document").annotate(n=Count("id")).values("n")
    )
    return queryset.annotate(taken=Coalesce(Subquery(open_assignments), 0)).filter(
        taken__lt=project.annotators_per_document
    )


def _has_annotation(user, document_ref: str) -> Exists:
    return Exists(Annotation.objects.filter(document=OuterRef(document_ref), annotator=user))


def _claim_ranked(*, project: Project, user) -> tuple[Document, dict, bool] | None:
    """Lock the best-ranked available document of the current ranking, with its stored pre-annotations.

    Walks the ranking in rank order (index on ranking, rank) and stops at the first free row: one
    statement, instead of ranking every pool document for each hand-out.
    """
    current = Ranking.objects.filter(project=project, is_current=True).values("id")[:1]
    scores = _eligible(PoolScore.objects.filter(ranking_id=Subquery(current)), project=project, user=user,
                       through="document")
    # One row, locked; SKIP LOCKED passes over the rows concurrent hand-outs are claiming.
    row = (
        scores.annotate(has_annotation=_has_annotation(user, "document"))
        .select_related("document")
        .order_by("rank", "document_id")
        .select_for_update(skip_locked=True, of=("document",)).first()
    )
    if row is None:
        return None
    return row.document, row.pre_annotations or {}, row.has_annotation


def _claim_unranked(*, project: Project, user) -> tuple[Document, dict, bool] | None:
    """Lock an available document the current ranking does not score (all of them before the first
    ranking, picked at random then; afterwards the ones imported since, oldest first)."""
    ranking = current_ranking(project=project)
    candidates = _eligible(Document.objects.all(), project=project, user=user)
    if ranking is not None:
        candidates = candidates.exclude(pool_scores__ranking=ranking).order_by("id")
    else:
        candidates = candidates.order_by("?")
    document = (
        candidates.annotate(has_annotation=_has_annotation(user, "pk"))
        .select_for_update(skip_locked=True, of=("self",)).first()
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
    spans = [
        {"start": int(s["start"]), "end": int(s["end"]), "label": s["label"], "confidence": s.get("confidence")}
        for s in stored.get("spans", [])
    ]
    return spans, list(stored.get("possible_missed", []))


def extend_assignment(*, annotation: Annotation) -> None:
    """Activity on a record keeps it assigned."""
    project = annotation.document.project
    Assignment.objects.filter(
        document=annotation.document, annotator=annotation.annotator, completed_at__isnull=True
    ).update(expires_at=timezone.now() + timedelta(minutes=project.assignment_timeout_minutes))
