"""Publishing a new ranking of a project's pool: written aside (staged), then made current in one
transaction, so the next-record query only ever reads a complete ranking. This module is the only writer
of the ranking tables (Ranking, PoolScore); the order it writes is decided by ``learning.core.ordering``.

A ranking may be written in pieces (one per shard of the pool, from several worker processes): each piece
replaces whatever an earlier try wrote for the same documents, so writing a piece twice is harmless.
"""
from __future__ import annotations

import json
from typing import Iterable, Sequence

from django.db import connection, transaction

from annotator.models import PoolScore, Project, Ranking
from annotator.selectors import scored_document_ids

#: Earlier rankings kept besides the current one (the dashboard compares with the previous one).
KEEP_PREVIOUS = 1
_LOWEST = -1e300


def stage_ranking(*, project: Project, strategy: str, strategy_params: dict) -> Ranking:
    """An empty ranking that is not current yet."""
    return Ranking.objects.create(project=project, strategy=strategy, strategy_params=strategy_params)


@transaction.atomic
def add_scores(*, ranking_id: int, entries: Iterable[tuple[int, float, dict]]) -> int:
    """Store (document id, score, pre-annotations) in a staged ranking; returns how many were written.

    The rows go in by COPY: ``bulk_create`` sends them as arrays, and psycopg escapes each pre-annotation's
    JSON text for the array with a regular expression, one match per quote — most of the time of scoring a
    shard went there."""
    rows = [(document_id, max(float(score), _LOWEST), json.dumps(pre)) for document_id, score, pre in entries]
    PoolScore.objects.filter(ranking_id=ranking_id, document_id__in=[row[0] for row in rows]).delete()
    if rows:
        fields = {name: PoolScore._meta.get_field(name).column
                  for name in ("ranking", "document", "score", "rank", "pre_annotations")}
        table = connection.ops.quote_name(PoolScore._meta.db_table)
        columns = ", ".join(connection.ops.quote_name(column) for column in fields.values())
        with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for document_id, score, pre in rows:
                copy.write_row((ranking_id, document_id, score, 0, pre))
    return len(rows)


def replace_pre_annotations(*, ranking_id: int, pre_annotations: dict[int, dict]) -> int:
    """Replace the stored pre-annotations of some documents of a ranking (``{document id: pre-annotations}``);
    returns how many rows were written."""
    if not pre_annotations:
        return 0
    ids = list(pre_annotations)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {PoolScore._meta.db_table} AS p SET pre_annotations = given.pre::jsonb
            FROM unnest(%s::bigint[], %s::text[]) AS given(document_id, pre)
            WHERE p.ranking_id = %s AND p.document_id = given.document_id
            """,
            [ids, [json.dumps(pre_annotations[i]) for i in ids], ranking_id],
        )
        return cursor.rowcount


def order_ranking(*, ranking_id: int, document_ids: Sequence[int]) -> None:
    """Number a ranking's scores 1..n in the order given (``learning.core.ordering`` decides it).

    ``document_ids`` lists every document the ranking scores, best first; a mismatch is refused, so a ranking
    is never left half-numbered.
    """
    with transaction.atomic():
        scored = scored_document_ids(ranking_id=ranking_id)
        if len(document_ids) != len(scored) or set(document_ids) != scored:
            raise ValueError(f"an order of ranking {ranking_id} must list each of its {len(scored)} documents once")
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {PoolScore._meta.db_table} AS p SET rank = ordered.rank
                FROM unnest(%s::bigint[]) WITH ORDINALITY AS ordered(document_id, rank)
                WHERE p.ranking_id = %s AND p.document_id = ordered.document_id
                """,
                [list(document_ids), ranking_id],
            )


@transaction.atomic
def activate_ranking(*, ranking_id: int, model_version_id: int | None, order: Sequence[int]) -> Ranking:
    """Number the staged ranking in ``order`` (document ids, best first) and make it the current one."""
    ranking = Ranking.objects.select_for_update().get(pk=ranking_id)
    order_ranking(ranking_id=ranking_id, document_ids=order)
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
