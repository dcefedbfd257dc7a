"""Publishing a new ranking of a project's pool: written aside, then made current in one transaction, so
the next-record query only ever reads a complete ranking."""
from __future__ import annotations

from typing import Iterable

from django.db import transaction

from annotator.models import PoolScore, Project, Ranking


@transaction.atomic
def publish_ranking(
    *, project: Project, model_version_id: int | None, strategy: str, strategy_params: dict,
    entries: Iterable[tuple[int, float, dict]],
) -> Ranking:
    """``entries``: (document id, score, pre-annotations). Best score first; ties by document id."""
    ordered = sorted(entries, key=lambda entry: (-entry[1], entry[0]))
    ranking = Ranking.objects.create(
        project=project, model_version_id=model_version_id, strategy=strategy, strategy_params=strategy_params,
    )
    PoolScore.objects.bulk_create(
        [
            PoolScore(ranking=ranking, document_id=document_id, score=score if score > -1e300 else -1e300,
                      rank=position, pre_annotations=pre)
            for position, (document_id, score, pre) in enumerate(ordered, start=1)
        ],
        batch_size=2000,
    )
    Ranking.objects.filter(project=project, is_current=True).update(is_current=False)
    Ranking.objects.filter(pk=ranking.pk).update(is_current=True)
    ranking.is_current = True
    return ranking
