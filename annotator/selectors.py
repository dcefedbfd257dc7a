"""Reads of the annotator app: the gold standard of a project, overviews, the workbench payload, the pool.

Who may read what is decided in ``annotator.permissions``."""
from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from itertools import groupby

from django.contrib.auth import get_user_model
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.utils import timezone

from annotator.models import Annotation, AuditEvent, Document, Membership, PoolScore, Project
from annotator.permissions import Can, role_allows, role_in
from corpus.adjudication import agreed_spans
from corpus.adjudication import conflicts as find_conflicts
from corpus.span_json import gold_spans, read_span, write_span
from corpus.types import Document as CorpusDocument


def _gold_rows(*, project: Project, include_evaluation: bool = True, role: str | None = None, with_text: bool,
               statuses: Collection[str] | None = None):
    """The submitted annotations that may hold gold, grouped by document (in document order)."""
    rows = Annotation.objects.filter(document__project=project, state=Annotation.State.SUBMITTED)
    if statuses is not None:
        rows = rows.filter(document__status__in=list(statuses))
    if not include_evaluation:
        rows = rows.filter(document__role=Document.Role.POOL)
    if role is not None:
        rows = rows.filter(document__role=role)
    fields = ["document_id", "document__status", "source", "spans"]
    if with_text:
        fields += ["document__external_id", "document__text", "document__meta"]
    rows = rows.order_by("document_id", "-submitted_at", "-id").values_list(*fields)
    return groupby(rows, key=lambda row: row[0])


def gold_of(*, status: str, annotations: Sequence[tuple[str, list]], agreed_only: bool) -> list[dict] | None:
    """**The gold rule**, the one used by training, evaluation, export and the dashboard: which stored spans
    are a record's gold, from its document status and its submitted annotations ``(source, spans)``, newest
    first. None when the record has no gold (yet).

    1. An adjudicated annotation, when there is one.
    2. Else an imported annotation (the newest): imported gold is gold.
    3. Else a record that one person was asked to annotate (status "submitted" with one submission): it.
    4. Else the record awaits adjudication — more than one submission that differ (those that agree are
       adjudicated when the last one comes in), or fewer than the project asks for: no gold, or, when the
       project says so (``agreed_only``), the spans every submission holds.
    """
    for source, spans in annotations:
        if source == Annotation.Source.ADJUDICATED:
            return spans
    for source, spans in annotations:
        if source == Annotation.Source.IMPORT:
            return spans
    human = [spans for source, spans in annotations if source == Annotation.Source.HUMAN]
    if len(human) == 1 and status in (Document.Status.SUBMITTED, Document.Status.ADJUDICATED):
        return human[0]
    if agreed_only and len(human) >= 2:
        agreed = set(agreed_spans({str(i): gold_spans(spans) for i, spans in enumerate(human)}))
        return [item for item in human[0] if item.get("origin") != "silver" and read_span(item) in agreed]
    return None


def _with_gold(*, project: Project, include_evaluation: bool = True, role: str | None = None, with_text: bool,
               statuses: Collection[str] | None = None):
    """(the record's first row, its gold's stored spans) for every record with gold under :func:`gold_of`."""
    agreed_only = project.awaiting_adjudication == Project.Awaiting.AGREED
    for _document_id, group in _gold_rows(project=project, include_evaluation=include_evaluation, role=role,
                                          with_text=with_text, statuses=statuses):
        group = list(group)
        spans = gold_of(status=group[0][1], annotations=[(row[2], row[3]) for row in group], agreed_only=agreed_only)
        if spans is not None:
            yield group[0], spans


def gold_documents(
    *, project: Project, include_evaluation: bool = True, role: str | None = None,
    statuses: Collection[str] | None = None,
) -> list[CorpusDocument]:
    """One document per record with gold under :func:`gold_of`, without silver spans.

    ``role`` keeps one role only (pool documents to train on, evaluation documents to measure on);
    ``statuses`` keeps the records in those statuses only (an export's choice).
    """
    return [CorpusDocument(text=text, spans=gold_spans(spans), name=external_id, meta=meta or {})
            for (_, _, _, _, external_id, text, meta), spans in _with_gold(
                project=project, include_evaluation=include_evaluation, role=role, with_text=True,
                statuses=statuses)]


def gold_document_ids(*, project: Project, role: str | None = None) -> list[int]:
    """The ids of the records with gold under :func:`gold_of` (without reading their texts)."""
    return [row[0] for row, _ in _with_gold(project=project, role=role, with_text=False)]


def gold_statuses(*, project: Project) -> list[tuple[str, str]]:
    """(status, role) of every record with gold under :func:`gold_of` (without reading their texts)."""
    return [(row[1], role) for role in Document.Role.values
            for row, _ in _with_gold(project=project, role=role, with_text=False)]


def project_overview(*, project: Project) -> dict:
    """Counts a project page shows: documents by role and status, gold annotations and spans."""
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


def _cut(text: str, marks, plain: dict) -> list[dict]:
    """``text`` cut at ``marks`` — (start, end, fields) — into marked and plain pieces (``plain``'s fields);
    where marks overlap, the earlier one wins."""
    segments, position = [], 0
    for start, end, fields in sorted(marks, key=lambda m: (m[0], -m[1])):
        start = max(start, position)
        if end <= start:
            continue
        if start > position:
            segments.append({"text": text[position:start], **plain})
        segments.append({"text": text[start:end], **fields})
        position = end
    if position < len(text):
        segments.append({"text": text[position:], **plain})
    return segments


def document_segments(*, text: str, spans: list[dict]) -> list[dict]:
    """The text cut into plain and labelled pieces for display (overlapping spans: the earlier one wins)."""
    marks = [(span["start"], span["end"], {"label": span["label"], "origin": span.get("origin", "human")})
             for span in spans]
    return _cut(text, marks, {"label": None})


def workbench_payload(*, annotation: Annotation) -> dict:
    """Everything the workbench page needs for one record, as JSON-ready values."""
    from django.urls import reverse

    from annotator.schemas import label_styles

    document = annotation.document
    project = document.project
    token_runs, n_tokens = record_tokens(document=document)
    if document.n_tokens is None:
        Document.objects.filter(pk=document.pk).update(n_tokens=n_tokens)
        document.n_tokens = n_tokens
    return {
        "project": {"id": project.pk, "name": project.name, "labels": project.labels,
                    "label_styles": label_styles(project.labels, project.label_styles),
                    "allow_overlap": project.allow_overlap},
        "document": {"id": document.pk, "external_id": document.external_id, "text": document.text},
        "annotation": {"id": annotation.pk, "version": annotation.version, "state": annotation.state,
                       "spans": annotation.spans},
        # Tokens as a flat run-length list [gap, length, gap, length, …] (gap: characters since the previous
        # token's end): a third of the size of [[start, end], …] on a long record.
        "token_runs": list(token_runs),
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


def record_tokens(*, document: Document) -> tuple[tuple[int, ...], int]:
    """The record's tokens as run lengths (see ``workbench_payload``) and how many there are.

    A record's text never changes once imported, so a process tokenizes it once: the hand-out, the workbench
    page and its reloads of the same record reuse the runs (of the last few hundred records)."""
    return _token_runs(document.pk, document.content_hash, document.text)


@lru_cache(maxsize=256)
def _token_runs(document_id: int, content_hash: str, text: str) -> tuple[tuple[int, ...], int]:
    from corpus.text import tokens_of

    runs, previous_end, count = [], 0, 0
    for token in tokens_of(text):
        runs.append(token.start - previous_end)
        runs.append(token.end - token.start)
        previous_end = token.end
        count += 1
    return tuple(runs), count


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


def scored_count(*, ranking_id: int) -> int:
    """How many documents a ranking scores so far (counted by the database, not read)."""
    return PoolScore.objects.filter(ranking_id=ranking_id).count()


def first_ranked(*, ranking_id: int, count: int) -> list[tuple[int, str, dict]]:
    """(document id, text, stored pre-annotations) of a ranking's first ``count`` records still in the pool."""
    rows = PoolScore.objects.filter(ranking_id=ranking_id, document__status=Document.Status.POOL)
    return list(rows.order_by("rank", "document_id")
                .values_list("document_id", "document__text", "pre_annotations")[:count])


def ranked_records(*, ranking_id: int, document_ids: Sequence[int]) -> list[tuple[int, str, dict]]:
    """(document id, text, stored pre-annotations) of these records of a ranking (staged or published) that are
    still in the pool."""
    rows = PoolScore.objects.filter(ranking_id=ranking_id, document_id__in=list(document_ids),
                                    document__status=Document.Status.POOL)
    return list(rows.order_by("document_id").values_list("document_id", "document__text", "pre_annotations"))


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


# Adjudication ---------------------------------------------------------------------------------------------

def adjudicated_with_submissions(*, project: Project) -> list[dict]:
    """The adjudicated pool records with each person's submission: ``{"gold": spans, "submissions":
    [(username, submitted_at, spans), …]}`` each — what annotators are measured against."""
    gold = dict(Annotation.objects.filter(document__project=project, document__role=Document.Role.POOL,
                                          source=Annotation.Source.ADJUDICATED, state=Annotation.State.SUBMITTED)
                .values_list("document_id", "spans"))
    rows = (Annotation.objects.filter(document_id__in=list(gold), source=Annotation.Source.HUMAN,
                                      state=Annotation.State.SUBMITTED, annotator__isnull=False)
            .order_by("document_id", "annotator__username")
            .values_list("document_id", "annotator__username", "submitted_at", "spans"))
    records: dict[int, dict] = {}
    for document_id, username, submitted_at, spans in rows:
        record = records.setdefault(document_id, {"gold": gold_spans(gold[document_id]), "submissions": []})
        record["submissions"].append((username, submitted_at, gold_spans(spans)))
    return list(records.values())


def submitted_spans(*, document: Document) -> dict[str, tuple]:
    """The people's submitted spans on the record, by user name (imported and adjudicated ones left out)."""
    rows = (Annotation.objects.filter(document=document, state=Annotation.State.SUBMITTED,
                                      source=Annotation.Source.HUMAN, annotator__isnull=False)
            .values_list("annotator__username", "spans"))
    return {username: gold_spans(spans) for username, spans in rows}


def adjudication_queue(*, project: Project, user) -> QuerySet[Document]:
    """The records awaiting a person's decision, oldest first: complete (status "submitted") with two or more
    submissions and no adjudicated gold — for an adjudicator who is not a lead, without those they annotated."""
    queue = (Document.objects.filter(project=project, status=Document.Status.SUBMITTED)
             .annotate(submissions=Count("annotations", filter=Q(annotations__source=Annotation.Source.HUMAN,
                                                                  annotations__state=Annotation.State.SUBMITTED)))
             .filter(submissions__gte=2).order_by("id"))
    if not role_allows(role_in(user=user, project=project), Can.MANAGE):
        queue = queue.exclude(annotations__annotator=user)
    return queue


def _adjudication_segments(text: str, agreed: list, conflicts: list) -> list[dict]:
    """The text cut into plain pieces, agreed spans and conflict stretches (numbered from 0), for display."""
    marks = [(s.start, s.end, {"label": s.label, "kind": "agreed", "agreed": i}) for i, s in enumerate(agreed)]
    marks += [(c.start, c.end, {"kind": "conflict", "conflict": i}) for i, c in enumerate(conflicts)]
    return _cut(text, marks, {"kind": "plain"})


def adjudication_payload(*, document: Document, user) -> dict:
    """What the adjudication page and API show of a record: its text once, the spans everybody marked, each
    conflict with every annotator's version, the gold already decided (if any) and the queue after it."""
    by_annotator = submitted_spans(document=document)
    agreed = agreed_spans(by_annotator)
    found = find_conflicts(by_annotator)
    gold = (Annotation.objects.filter(document=document, source=Annotation.Source.ADJUDICATED)
            .values_list("spans", flat=True).first())
    remaining = adjudication_queue(project=document.project, user=user).exclude(pk=document.pk)
    following = remaining.filter(pk__gt=document.pk).values_list("pk", flat=True).first()
    if following is None:
        following = remaining.values_list("pk", flat=True).first()
    return {
        "document": {"id": document.pk, "external_id": document.external_id, "text": document.text,
                     "status": document.status},
        "labels": list(document.project.labels),
        "annotators": sorted(by_annotator),
        "agreed": [write_span(s) for s in agreed],
        "conflicts": [{"start": c.start, "end": c.end, "text": document.text[c.start:c.end],
                       "versions": {name: [{**write_span(s), "text": document.text[s.start:s.end]} for s in spans]
                                    for name, spans in c.versions.items()}}
                      for c in found],
        "gold": [write_span(s) for s in gold_spans(gold)] if gold is not None else None,
        "segments": _adjudication_segments(document.text, agreed, found),
        "next_document": following,
        "remaining": remaining.count(),
    }


def project_members(*, project: Project) -> QuerySet:
    """The project's memberships with their users, leads and admins first."""
    order = {Membership.Role.ADMIN: 0, Membership.Role.LEAD: 1, Membership.Role.ADJUDICATOR: 2,
             Membership.Role.ANNOTATOR: 3}
    rank = Case(*[When(role=role, then=Value(position)) for role, position in order.items()],
                output_field=IntegerField())
    return (project.memberships.select_related("user", "user__deidloop_account")
            .annotate(role_rank=rank).order_by("role_rank", "user__username"))


def site_accounts() -> QuerySet:
    """Every account with how many projects it belongs to, by username."""
    return (get_user_model().objects.select_related("deidloop_account")
            .annotate(project_count=Count("memberships")).order_by("username"))
