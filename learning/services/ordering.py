"""The order a project's new ranking is served in: by score, and — when the project keeps its batches
diverse and has a stylometric clustering — each batch spread across the clusters.

The order itself is decided by ``learning.core.ordering``; the ranking tables are written by
``annotator.services.ranking``, which takes the order from here.
"""
from __future__ import annotations

from annotator.models import Project
from annotator.selectors import ranking_scores
from annotator.services.ranking import order_ranking
from learning.core.ordering import UNCLUSTERED, rank_by_score, spread_batches
from learning.selectors.clusters import current_clustering


def ranking_order(project: Project, ranking_id: int) -> list[int]:
    """The document ids of a staged ranking, first served first."""
    document_ids, scores = ranking_scores(ranking_id=ranking_id)
    ranked = rank_by_score(document_ids, scores)
    groups = _cluster_groups(project, ranked)
    if groups is None:
        return ranked
    return [ranked[position] for position in spread_batches(groups, max(project.batch_size, 1))]


def diverse_order(project: Project, ranking_id: int) -> list[int] | None:
    """Re-rank a staged ranking so that every batch of ``project.batch_size`` records spreads across clusters.

    Applies when the project keeps batches diverse and has a clustering; otherwise returns None and changes
    nothing. Records without a cluster (imported after the clustering) are one more group. Returns the
    document ids in the new rank order.
    """
    if _clustering_applies(project) is None:
        return None
    order = ranking_order(project, ranking_id)
    order_ranking(ranking_id=ranking_id, document_ids=order)
    return order


def _clustering_applies(project: Project):
    return current_clustering(project) if project.diverse_batches else None


def _cluster_groups(project: Project, document_ids: list[int]) -> list[int] | None:
    clustering = _clustering_applies(project)
    if clustering is None:
        return None
    return [clustering.labels.get(str(document_id), UNCLUSTERED) for document_id in document_ids]
