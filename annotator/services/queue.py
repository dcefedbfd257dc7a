"""Handing out records: the best-ranked unassigned pool document under the current ranking.

Rows are claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` so concurrent annotators never receive the same
record (unless the project asks for N annotators per record); assignments abandoned for longer than the
project's timeout return to the pool.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, F, OuterRef, Subquery
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


def _claim_candidate(*, project: Project, user, ranking: Ranking | None) -> Document | None:
    """Lock and return the best available document, skipping rows other transactions hold."""
    candidates = Document.objects.filter(
        project=project, role=Document.Role.POOL, status__in=[Document.Status.POOL, Document.Status.ASSIGNED]
    ).exclude(assignments__annotator=user)
    if project.annotators_per_document <= 1:
        candidates = candidates.filter(status=Document.Status.POOL)
    else:
        open_assignments = (
            Assignment.objects.filter(document=OuterRef("pk"), completed_at__isnull=True)
            .values("document").annotate(n=Count("id")).values("n")
        )
        candidates = candidates.annotate(taken=Coalesce(Subquery(open_assignments), 0)).filter(
            taken__lt=project.annotators_per_document
        )
    if ranking is not None:
        rank = PoolScore.objects.filter(ranking=ranking, document=OuterRef("pk")).values("rank")[:1]
        candidates = candidates.annotate(rank=Subquery(rank)).order_by(F("rank").asc(nulls_last=True), "id")
    else:
        candidates = candidates.order_by("?")
    # One row, locked; SKIP LOCKED passes over the rows concurrent hand-outs are claiming.
    return candidates.select_for_update(skip_locked=True, of=("self",)).first()


@transaction.atomic
def next_record(*, project: Project, user) -> Handout | None:
    """The record this annotator should work on now: their open one, else the best-ranked free one."""
    release_expired_assignments(project=project)
    open_assignment = _open_assignment(project=project, user=user)
    if open_assignment is not None:
        annotation = Annotation.objects.get(document=open_assignment.document, annotator=user)
        return Handout(assignment=open_assignment, annotation=annotation, resumed=True)

    ranking = current_ranking(project=project)
    document = _claim_candidate(project=project, user=user, ranking=ranking)
    if document is None:
        return None
    now = timezone.now()
    assignment = Assignment.objects.create(
        document=document, annotator=user, expires_at=now + timedelta(minutes=project.assignment_timeout_minutes)
    )
    taken = Assignment.objects.filter(document=document, completed_at__isnull=True).count()
    if taken >= project.annotators_per_document:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.ASSIGNED)
    suggestions, possible_missed = _pre_annotations(ranking=ranking, document=document)
    annotation = Annotation.objects.filter(document=document, annotator=user).first()
    if annotation is None:
        annotation = Annotation.objects.create(
            document=document, annotator=user, source=Annotation.Source.HUMAN, state=Annotation.State.DRAFT,
            spans=[{**span, "origin": "model", "status": "pending"} for span in suggestions],
            suggested=suggestions, possible_missed=possible_missed,
        )
    return Handout(assignment=assignment, annotation=annotation, resumed=False)


def _pre_annotations(*, ranking: Ranking | None, document: Document) -> tuple[list[dict], list]:
    if ranking is None:
        return [], []
    stored = (
        PoolScore.objects.filter(ranking=ranking, document=document).values_list("pre_annotations", flat=True).first()
    ) or {}
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
