"""Scores written into a staged ranking: what is read back is what was written, and a piece written again
replaces the first."""
from __future__ import annotations

import pytest

from annotator.models import PoolScore
from annotator.services.imports import import_documents
from annotator.services.ranking import add_scores, stage_ranking
from corpus.types import Document as CorpusDocument

pytestmark = pytest.mark.django_db

AWKWARD = {
    "spans": [{"start": 0, "end": 3, "label": "NOMBRE_SUJETO_ASISTENCIA", "confidence": 0.8123}],
    "possible_missed": [[4, 9, 0.25]],
    "note": 'tab\there, new\nline, back\\slash, "quotes", \\N, ñandú, 日本, \u2028, emoji \U0001F600',
}


def test_scores_read_back_as_written_and_a_piece_written_again_replaces_the_first(projects):
    project = projects["A"]
    import_documents(project=project, annotated=False,
                     documents=[CorpusDocument(text=f"Nota {k} de Ana.", name=f"n{k}") for k in range(4)])
    ids = sorted(project.documents.values_list("pk", flat=True))
    ranking = stage_ranking(project=project, strategy="LCUB_6", strategy_params={})

    first = [(ids[0], 0.9, AWKWARD), (ids[1], -1e309, {}), (ids[2], 2.5, {})]
    assert add_scores(ranking_id=ranking.pk, entries=first) == 3
    assert add_scores(ranking_id=ranking.pk, entries=[(ids[2], 0.1, {"spans": []}), (ids[3], 0.4, {})]) == 2
    assert add_scores(ranking_id=ranking.pk, entries=[]) == 0

    stored = {row.document_id: row for row in PoolScore.objects.filter(ranking=ranking)}
    assert sorted(stored) == ids
    assert stored[ids[0]].pre_annotations == AWKWARD and stored[ids[0]].score == 0.9
    assert stored[ids[1]].score == -1e300  # minus infinity is stored as the lowest score
    assert stored[ids[2]].score == 0.1 and stored[ids[2]].pre_annotations == {"spans": []}
    assert {row.rank for row in stored.values()} == {0}
