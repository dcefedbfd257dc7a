"""Publishing a new ranking of a project's pool: written aside (staged), then made current in one
transaction, so the next-record query only ever reads a complete ranking.

A ranking may be written in pieces (one per shard of the pool, from several worker processes): each piece
replaces whatever an earlier try wrote for the same documents, so writing a piece twice is harmless.
"""
from __future__ import annotations

from typing import Iterable

from django.db import connection, transaction

from annotator.models import PoolScore, Project, Ranking

#: Earlier rankings kept besides the current one (the dashboard compares with the previous one).
KEEP_PREVIOUS = 1
_LOWEST = -1e300


def stage_ranking(*, project: Project, strategy: str, strategy_params: dict) -> Ranking:
    """An empty ranking that is not current yet."""
    return Ranking.objects.create(project=project, strategy=strategy, strategy_params=strategy_params)


@transaction.atomic
def add_scores(*, ranking_id: int, entries: Iterable[tuple[int, float, dict]]) -> int:
    """Store (document id, score, pre-annotations) in a staged ranking; returns how many were written."""
    rows = [
        PoolScore(ranking_id=ranking_id, document_id=document_id, score=max(score, _LOWEST), rank=0,
                  pre_annotations=pre)
        for document_id, score, pre in entries
    ]
    PoolScore.objects.filter(ranking_id=ranking_id, document_id__in=[row.document_id for row in rows]).delete()
    PoolScore.objects.bulk_create(rows, batch_size=2000)
    return len(rows)


def scored_document_ids(*, ranking_id: int) -> set[int]:
    return set(PoolScore.objects.filter(ranking_id=ranking_id).values_list("document_id", flat=True))


@transaction.atomic
def activate_ranking(*, ranking_id: int, model_version_id: int | None) -> Ranking:
    """Number the staged ranking (best score first, ties by document id) and make it the current one."""
    ranking = Ranking.objects.select_for_update().get(pk=ranking_id)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE annotator_poolscore AS p SET rank = ordered.position
            FROM (SELECT id, row_number() OVER (ORDER BY score DESC, document_id) AS position
                  FROM annotator_poolscore WHERE ranking_id = %s) AS ordered
            WHERE p.id = ordered.id
            """,
            [ranking_id],
        )
    Ranking.objects.filter(project_id=ranking.project_id, is_current=True).update(is_current=False)
    Ranking.objects.filter(pk=ranking_id).update(is_current=True, model_version_id=model_version_id)
    stale = Ranking.objects.filter(project_id=ranking.project_id, is_current=False, pk__lt=ranking_id)
    Ranking.objects.filter(pk__in=list(stale.order_by("-pk").values_list("pk", flat=True)[KEEP_PREVIOUS:])).delete()
    ranking.is_current = True
    ranking.model_version_id = model_version_id
    return ranking


def discard_ranking(*, ranking_id: int) -> None:
    """Drop a staged ranking that will never be published."""
    Ranking.objects.filter(pk=ranking_id, is_current=False).delete()


@transaction.atomic
def publish_ranking(
    *, project: Project, model_version_id: int | None, strategy: str, strategy_params: dict,
    entries: Iterable[tuple[int, float, dict]],
) -> Ranking:
    """Stage, fill and activate a ranking in one go. ``entries``: (document id, score, pre-annotations)."""
    ranking = stage_ranking(project=project, strategy=strategy, strategy_params=strategy_params)
    add_scores(ranking_id=ranking.pk, entries=entries)
    return activate_ranking(ranking_id=ranking.pk, model_version_id=model_version_id)
