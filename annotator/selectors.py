"""Reads of the annotator app: the gold standard of a project, overviews, the workbench payload, the pool.

Who may read what is decided in ``annotator.permissions``."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from annotator.models import Annotation, AuditEvent, Document, PoolScore, Project
from corpus.span_json import gold_spans
from corpus.types import Document as CorpusDocument


def gold_documents(
    *, project: Project, include_evaluation: bool = True, role: str | None = None
) -> list[CorpusDocument]:
    """One document per annotated text: its latest submitted annotation, without silver spans.

    ``role`` keeps one role only (pool documents to train on, evaluation documents to measure on).
    """
    rows = Annotation.objects.filter(document__project=project, state=Annotation.State.SUBMITTED)
    if not include_evaluation:
        rows = rows.filter(document__role=Document.Role.POOL)
    if role is not None:
        rows = rows.filter(document__role=role)
    rows = rows.order_by("document_id", "-submitted_at", "-id").distinct("document_id").values_list(
        "document__external_id", "document__text", "document__meta", "spans",
    )
    documents = []
    for external_id, text, meta, spans in rows:
        documents.append(CorpusDocument(text=text, spans=gold_spans(spans), name=external_id, meta=meta or {}))
    return documents


def project_overview(*, project: Project) -> dict:
    """Counts a project page shows: documents by role and status, gold annotations and spans."""
    from django.db.models import Count

    counts = {(row["role"], row["status"]): row["n"] for row in
              Document.objects.filter(project=project).values("role", "status").annotate(n=Count("id"))}
    pool = {status: counts.get((Document.Role.POOL, status), 0) for status in Document.Status.values}
    evaluation = sum(n for (role, _status), n in counts.items() if role == Document.Role.EVALUATION)
    return {
        "pool": pool,
        "pool_total": sum(pool.values()),
        "evaluation": evaluation,
        "documents": sum(counts.values()),
        "submitted_annotations": Annotation.objects.filter(
            document__project=project, state=Annotation.State.SUBMITTED
        ).count(),
    }


def document_segments(*, text: str, spans: list[dict]) -> list[dict]:
    """The text cut into plain and labelled pieces for display (overlapping spans: the earlier one wins)."""
    segments, position = [], 0
    for span in sorted(spans, key=lambda s: (s["start"], -s["end"])):
        start, end = max(span["start"], position), span["end"]
        if end <= start:
            continue
        if start > position:
            segments.append({"text": text[position:start], "label": None})
        segments.append({"text": text[start:end], "label": span["label"], "origin": span.get("origin", "human")})
        position = end
    if position < len(text):
        segments.append({"text": text[position:], "label": None})
    return segments


def workbench_payload(*, annotation: Annotation) -> dict:
    """Everything the workbench page needs for one record, as JSON-ready values."""
    from django.urls import reverse

    from corpus.text import tokenize

    document = annotation.document
    project = document.project
    tokens = tokenize(document.text)
    if document.n_tokens is None:
        Document.objects.filter(pk=document.pk).update(n_tokens=len(tokens))
    return {
        "project": {"id": project.pk, "name": project.name, "labels": project.labels,
                    "allow_overlap": project.allow_overlap},
        "document": {"id": document.pk, "external_id": document.external_id, "text": document.text},
        "annotation": {"id": annotation.pk, "version": annotation.version, "state": annotation.state,
                       "spans": annotation.spans},
        # Tokens as a flat run-length list [gap, length, gap, length, …] (gap: characters since the previous
        # token's end): a third of the size of [[start, end], …] on a long record.
        "token_runs": _token_runs(tokens),
        "possible_missed": annotation.possible_missed,
        "urls": {
            "draft": reverse("annotation-draft", args=[annotation.pk]),
            "submit": reverse("annotation-submit", args=[annotation.pk]),
            "next": reverse("annotator:annotate-next", args=[project.pk]),
            "next_api": reverse("project-next", args=[project.pk]),
            "current": reverse("annotation-workbench", args=[annotation.pk]),
            "reload": reverse("annotator:annotate", args=[project.pk, document.pk]),
        },
        "ws": f"/ws/projects/{project.pk}/",
    }


def _token_runs(tokens) -> list[int]:
    runs, previous_end = [], 0
    for token in tokens:
        runs.append(token.start - previous_end)
        runs.append(token.end - token.start)
        previous_end = token.end
    return runs


def unlabelled_pool_ids(*, project: Project) -> list[int]:
    """Ids of the pool documents nobody has taken yet, in id order."""
    return list(
        Document.objects.filter(project=project, role=Document.Role.POOL, status=Document.Status.POOL)
        .order_by("id").values_list("id", flat=True)
    )


def unlabelled_pool(
    *, project: Project, ids: list[int] | None = None
) -> tuple[list[int], list[CorpusDocument]]:
    """The pool documents nobody has taken yet (ids, and the documents to score); ``ids`` keeps those only."""
    rows = Document.objects.filter(project=project, role=Document.Role.POOL, status=Document.Status.POOL)
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    rows = rows.order_by("id").values_list("id", "external_id", "text")
    ids, documents = [], []
    for document_id, external_id, text in rows:
        ids.append(document_id)
        documents.append(CorpusDocument(text=text, name=external_id))
    return ids, documents


def _submitted_pool_annotations(project: Project) -> QuerySet[Annotation]:
    return Annotation.objects.filter(
        document__project=project, document__role=Document.Role.POOL, state=Annotation.State.SUBMITTED
    )


def double_annotated(*, project: Project) -> list[dict]:
    """The pool records that two or more people submitted: ``{"id", "external_id", "text", "submitted_at"
    (the latest), "spans": {username: [Span, …]}}`` each, in the order of their latest submission.

    Only the annotations people submitted here count (imported ones have nobody's name); silver spans never
    do. For the lead's agreement figures: this holds every annotator's work side by side."""
    rows = (_submitted_pool_annotations(project)
            .filter(annotator__isnull=False)
            .order_by("document_id", "annotator__username")
            .values_list("document_id", "document__external_id", "document__text", "annotator__username", "spans",
                         "submitted_at"))
    records: dict[int, dict] = {}
    for document_id, external_id, text, username, spans, submitted_at in rows:
        record = records.setdefault(document_id, {"id": document_id, "external_id": external_id, "text": text,
                                                  "submitted_at": submitted_at, "spans": {}})
        record["spans"][username] = list(gold_spans(spans))
        if submitted_at and (record["submitted_at"] is None or submitted_at > record["submitted_at"]):
            record["submitted_at"] = submitted_at
    double = [r for r in records.values() if len(r["spans"]) >= 2]
    return sorted(double, key=lambda r: (r["submitted_at"] or timezone.now(), r["id"]))


def submission_count(*, project: Project) -> int:
    """Submitted annotations of pool documents (what the loop's batch size counts)."""
    return _submitted_pool_annotations(project).count()


def annotator_hours(*, project: Project) -> float:
    """Active annotation time spent on the project's submitted pool records, in hours."""
    from django.db.models import Sum

    seconds = _submitted_pool_annotations(project).aggregate(total=Sum("active_seconds"))["total"]
    return (seconds or 0.0) / 3600.0


def cost_records(*, project: Project) -> list[dict]:
    """Per submitted record made here: who, tokens, corrections and active seconds (what costs are fitted on)."""
    return list(
        _submitted_pool_annotations(project)
        .filter(source=Annotation.Source.HUMAN, annotator__isnull=False, document__n_tokens__isnull=False)
        .order_by("submitted_at", "id")
        .values("annotator_id", "annotator__username", "document__n_tokens", "fn_fixes", "fp_fixes",
                "relabels", "boundary_changes", "active_seconds", "submitted_at")
    )


def ranking_top(*, project: Project, limit: int = 10) -> dict | None:
    """The current ranking: its strategy and parameters, and its best-ranked records still in the pool."""
    from annotator.models import Ranking

    ranking = Ranking.objects.filter(project=project, is_current=True).first()
    if ranking is None:
        return None
    rows = (PoolScore.objects.filter(ranking=ranking, document__status=Document.Status.POOL)
            .order_by("rank").values("rank", "score", "document_id", "document__external_id")[:limit])
    return {"ranking": ranking, "rows": list(rows),
            "size": PoolScore.objects.filter(ranking=ranking).count()}


def settings_history(*, project: Project, limit: int = 20) -> list[dict]:
    """Who changed which setting of the project, when, from what to what (newest first)."""
    events = (AuditEvent.objects.filter(project=project, action=AuditEvent.Action.EDIT, detail__has_key="settings")
              .select_related("user").order_by("-created_at")[:limit])
    return [{"when": event.created_at, "who": event.user.username if event.user else "—",
             "changes": [{"setting": name, "old": old, "new": new}
                         for name, (old, new) in sorted(event.detail["settings"].items())]}
            for event in events]


def scored_document_ids(*, ranking_id: int) -> set[int]:
    return set(PoolScore.objects.filter(ranking_id=ranking_id).values_list("document_id", flat=True))


def ranking_scores(*, ranking_id: int) -> tuple[list[int], list[float]]:
    """The documents a ranking scores and their scores (in document id order)."""
    rows = list(PoolScore.objects.filter(ranking_id=ranking_id).order_by("document_id")
                .values_list("document_id", "score"))
    return [document_id for document_id, _ in rows], [score for _, score in rows]


def open_annotation(*, project: Project, user) -> Annotation | None:
    """The user's draft of the record handed to them and not yet submitted (an unexpired assignment), if any."""
    from annotator.models import Assignment

    open_documents = Assignment.objects.filter(
        document__project=project, annotator=user, completed_at__isnull=True, expires_at__gte=timezone.now()
    ).values("document_id")
    return (Annotation.objects.filter(document_id__in=open_documents, annotator=user, state=Annotation.State.DRAFT)
            .order_by("-updated_at").first())


def project_events(
    *, project: Project, username: str = "", action: str = "", date_from: date | None = None,
    date_to: date | None = None, object_id: str = "",
) -> QuerySet[AuditEvent]:
    """A project's audit events, newest first; ``username`` matches part of the name, the dates are whole days in
    the site's time zone, both included."""
    events = AuditEvent.objects.filter(project_id=project.pk)
    if username:
        events = events.filter(username__icontains=username)
    if action:
        events = events.filter(action=action)
    # Bounds on created_at itself (not created_at__date), so that the (project, -created_at) index serves them.
    if date_from is not None:
        events = events.filter(created_at__gte=_start_of_day(date_from))
    if date_to is not None and date_to < date.max:
        events = events.filter(created_at__lt=_start_of_day(date_to + timedelta(days=1)))
    if object_id:
        events = events.filter(object_id=object_id)
    return events.order_by("-created_at", "-id")


def _start_of_day(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))
