"""Stylometric clusters of a project's documents (ALGORITHMS.md §8): computed and stored, shown to the
project with the current model's scores per cluster, and used to keep the loop's batches diverse.

A clustering covers every document of the project, pool and evaluation, as it was when computed; records
imported later have no cluster until the next one and form a group of their own when batches are spread.
The newest finished clustering is the project's; a newer one replaces the older rows.
"""
from __future__ import annotations

import logging
import math
import pickle
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from annotator.models import Document, PoolScore, Project
from annotator.selectors import gold_documents
from learning.core import stylometry
from learning.core.metrics import evaluate
from learning.models import Clustering, ModelVersion

log = logging.getLogger(__name__)

#: Projects with at most this many documents are clustered in the request; larger ones on a worker.
SYNC_LIMIT = 2000
#: Ward linkage and the Dunn index need all pairwise distances (n² memory: 4,000 documents take ~350 MB
#: and ~4 s). Beyond that a seeded random sample is clustered and every other document joins the cluster
#: whose centre is nearest in the same standardised features.
MAX_CLUSTERED = 4000
#: The sample is drawn with a fixed seed: clustering the same documents again gives the same clusters.
SAMPLE_SEED = 0
#: A clustering queued or running for longer than this is taken for dead (its worker crashed), so a
#: lead may ask for a new one.
STALE_AFTER = timedelta(hours=1)
#: Group of the documents imported after the clustering was computed.
UNCLUSTERED = -1
_ANNOTATED = (Document.Status.SUBMITTED, Document.Status.ADJUDICATED)
#: How the page names the features.
FEATURE_TITLES = {
    "flesch_reading_ease": "Flesch reading ease",
    "flesch_kincaid_grade": "Flesch–Kincaid grade",
    "gunning_fog": "Gunning FOG",
    "coleman_liau": "Coleman–Liau",
    "linsear_write": "Linsear Write",
    "lix": "LIX",
    "forcast": "FORCAST",
    "danielson_bryan": "Danielson–Bryan",
    "dickes_steiwer": "Dickes–Steiwer",
    "carroll_cttr": "Carroll's CTTR",
    "dugast_uber": "Dugast's Uber index",
    "yule_k": "Yule's K",
    "mtld": "MTLD",
    "clinical_term_ratio": "Clinical-term ratio",
}
_FEATURE_CHUNK = 500


# Computing ----------------------------------------------------------------------------------------------------

def current_clustering(project: Project) -> Clustering | None:
    """The project's clustering: the newest one that finished."""
    return (Clustering.objects.filter(project=project, status=Clustering.Status.DONE)
            .order_by("-created_at", "-pk").first())


def latest_attempt(project: Project) -> Clustering | None:
    """The newest clustering in any state (queued, running, failed or done)."""
    return Clustering.objects.filter(project=project).order_by("-created_at", "-pk").first()


def runs_in_request(project: Project) -> bool:
    """Whether a recompute of ``project`` runs at once (small projects) rather than on a worker."""
    return Document.objects.filter(project=project).count() <= SYNC_LIMIT


def request_clustering(*, project: Project) -> tuple[Clustering, bool]:
    """A queued clustering of ``project``, and whether it is new (False: one is already queued or running)."""
    active = Clustering.objects.filter(
        project=project, status__in=[Clustering.Status.QUEUED, Clustering.Status.RUNNING],
        created_at__gte=timezone.now() - STALE_AFTER,
    ).order_by("-created_at").first()
    if active is not None:
        return active, False
    return Clustering.objects.create(project=project), True


def run_clustering(clustering_id: int) -> Clustering | None:
    """Compute a queued clustering; None when another process took it already (a repeated message).

    A failure is stored on the row (status failed, with a message) rather than raised: the project keeps its
    previous clustering.
    """
    claimed = Clustering.objects.filter(pk=clustering_id, status=Clustering.Status.QUEUED).update(
        status=Clustering.Status.RUNNING
    )
    if not claimed:
        return None
    clustering = Clustering.objects.select_related("project").get(pk=clustering_id)
    project = clustering.project
    try:
        document_ids, result = _cluster_project(project)
    except Exception as error:  # noqa: BLE001 - every failure ends the row; the page shows the message
        log.exception("clustering %s of project %s failed", clustering_id, project.pk)
        Clustering.objects.filter(pk=clustering_id).update(
            status=Clustering.Status.FAILED, error=_describe(error), finished_at=timezone.now()
        )
        clustering.refresh_from_db()
        return clustering
    with transaction.atomic():
        Clustering.objects.filter(pk=clustering_id).update(
            status=Clustering.Status.DONE, k=result.k,
            dunn={str(k): _json_float(value) for k, value in result.dunn.items()},
            kept_features=list(result.kept_features), feature_names=list(result.feature_names),
            cluster_means=[[float(v) for v in row] for row in result.cluster_means],
            labels={str(document_id): int(label)
                    for document_id, label in zip(document_ids, result.labels, strict=True)},
            error="", finished_at=timezone.now(),
        )
        # Superseded: older finished or failed rows (their labels are the bulk of the table).
        Clustering.objects.filter(
            project=project, created_at__lt=clustering.created_at,
            status__in=[Clustering.Status.DONE, Clustering.Status.FAILED],
        ).delete()
    clustering.refresh_from_db()
    return clustering


def compute_clustering(project: Project) -> Clustering:
    """Cluster all of ``project``'s documents now, in this process; the stored row (done or failed)."""
    clustering = Clustering.objects.create(project=project)
    finished = run_clustering(clustering.pk)
    return finished if finished is not None else Clustering.objects.get(pk=clustering.pk)


def _cluster_project(project: Project) -> tuple[list[int], stylometry.Clustering]:
    """Document ids (in id order) and their clustering."""
    document_ids: list[int] = []
    blocks: list[np.ndarray] = []
    names: list[str] = list(stylometry.FEATURE_NAMES)
    chunk: list[str] = []
    rows = Document.objects.filter(project=project).order_by("id").values_list("id", "text")
    for document_id, text in rows.iterator(chunk_size=_FEATURE_CHUNK):
        document_ids.append(document_id)
        chunk.append(text)
        if len(chunk) == _FEATURE_CHUNK:
            names, block = stylometry.feature_matrix(chunk, project.language)
            blocks.append(block)
            chunk = []
    if chunk or not blocks:
        names, block = stylometry.feature_matrix(chunk, project.language)
        blocks.append(block)
    matrix = np.vstack(blocks)
    if matrix.shape[0] <= MAX_CLUSTERED:
        return document_ids, stylometry.cluster_features(matrix, names)
    return document_ids, _cluster_sample(matrix, names, seed=SAMPLE_SEED)


def _cluster_sample(matrix: np.ndarray, names: Sequence[str], *, seed: int) -> stylometry.Clustering:
    """Ward clustering of a random sample of the rows; the other rows go to the nearest cluster centre."""
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(matrix.shape[0], size=MAX_CLUSTERED, replace=False))
    on_sample = stylometry.cluster_features(matrix[sample], names)
    kept = [list(names).index(name) for name in on_sample.kept_features]
    labels = np.zeros(matrix.shape[0], dtype=int)
    if on_sample.k > 1 and kept:
        x = matrix[:, kept]
        mean, std = x[sample].mean(axis=0), x[sample].std(axis=0)
        z = (x - mean) / np.where(std > 0, std, 1.0)
        centres = np.array([z[sample][on_sample.labels == c].mean(axis=0) for c in range(on_sample.k)])
        labels = ((z[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        labels[sample] = on_sample.labels
        labels = stylometry.numbered_by_size(labels)
    k = int(labels.max()) + 1
    return stylometry.Clustering(
        labels=labels, k=k, dunn=on_sample.dunn, kept_features=on_sample.kept_features,
        feature_names=on_sample.feature_names,
        cluster_means=np.array([matrix[labels == c].mean(axis=0) for c in range(k)]),
    )


def _json_float(value: float) -> float | str:
    # PostgreSQL's jsonb has no infinity; the Dunn index is infinite when no cluster has any spread.
    return value if math.isfinite(value) else "inf"


def _describe(error: BaseException) -> str:
    if isinstance(error, stylometry.UnsupportedLanguageError):
        return str(error)
    return f"{type(error).__name__}: {error}"


# Showing ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusterScores:
    """The current model on a cluster's evaluation documents (exact-match entities)."""

    documents: int
    p: float
    r: float
    f1: float
    support: int  # gold entities


@dataclass(frozen=True)
class ClusterRow:
    label: int  # as stored; shown as label + 1
    size: int
    share: float  # of the clustered documents
    annotated: int  # submitted pool documents
    annotated_share: float  # of the clustered annotated documents (0 when none is annotated)
    evaluation_documents: int  # with gold
    means: list[float]  # of the kept features (ClusterOverview.kept_features), unstandardised
    scores: ClusterScores | None

    @property
    def number(self) -> int:
        return self.label + 1

    @property
    def share_percent(self) -> float:
        return 100 * self.share

    @property
    def annotated_percent(self) -> float:
        return 100 * self.annotated_share


@dataclass(frozen=True)
class ClusterOverview:
    clustering: Clustering | None
    latest: Clustering | None  # the newest attempt, when it is not ``clustering`` (queued, running, failed)
    rows: list[ClusterRow] = field(default_factory=list)
    documents: int = 0  # clustered documents still in the project
    annotated: int = 0
    unclustered: int = 0  # documents imported since the clustering
    dunn: list[tuple[int, float, bool]] = field(default_factory=list)  # (k, Dunn index, chosen)
    kept_features: list[str] = field(default_factory=list)
    dropped_features: list[str] = field(default_factory=list)
    clustered_at_most: int = MAX_CLUSTERED
    sampled: bool = False
    model: ModelVersion | None = None
    model_note: str = ""  # why there are no per-cluster scores, when there are none

    @property
    def kept_titles(self) -> list[str]:
        return [FEATURE_TITLES.get(name, name) for name in self.kept_features]

    @property
    def dropped_titles(self) -> list[str]:
        return [FEATURE_TITLES.get(name, name) for name in self.dropped_features]

    def chart(self) -> dict[str, Any]:
        """What the page's chart draws."""
        return {
            "clusters": [f"Cluster {row.number}" for row in self.rows],
            "share": [row.share for row in self.rows],
            "annotated_share": [row.annotated_share for row in self.rows],
            "f1": [row.scores.f1 if row.scores else None for row in self.rows],
        }


def cluster_overview(project: Project) -> ClusterOverview:
    """The project's clusters with sizes, shares of the whole and of the annotated set, mean features and
    the current model's scores per cluster."""
    clustering = current_clustering(project)
    latest = latest_attempt(project)
    if latest is not None and clustering is not None and latest.pk == clustering.pk:
        latest = None
    if clustering is None:
        return ClusterOverview(clustering=None, latest=latest)

    labels = {int(key): int(value) for key, value in clustering.labels.items()}
    sizes = [0] * clustering.k
    annotated = [0] * clustering.k
    unclustered = 0
    for document_id, role, status in Document.objects.filter(project=project).values_list("id", "role", "status"):
        label = labels.get(document_id)
        if label is None:
            unclustered += 1
            continue
        sizes[label] += 1
        annotated[label] += role == Document.Role.POOL and status in _ANNOTATED
    documents, annotated_total = sum(sizes), sum(annotated)

    by_cluster, evaluation_counts, model, model_note = _scores_by_cluster(project, labels, clustering.k)
    kept = list(clustering.kept_features)
    positions = [clustering.feature_names.index(name) for name in kept]
    rows = [
        ClusterRow(
            label=label, size=sizes[label], share=sizes[label] / documents if documents else 0.0,
            annotated=annotated[label],
            annotated_share=annotated[label] / annotated_total if annotated_total else 0.0,
            evaluation_documents=evaluation_counts[label],
            means=[clustering.cluster_means[label][i] for i in positions],
            scores=by_cluster.get(label),
        )
        for label in range(clustering.k)
    ]
    chosen = clustering.k
    dunn = sorted((int(k), float(value), int(k) == chosen) for k, value in clustering.dunn.items())
    return ClusterOverview(
        clustering=clustering, latest=latest, rows=rows, documents=documents, annotated=annotated_total,
        unclustered=unclustered, dunn=dunn, kept_features=kept,
        dropped_features=[name for name in clustering.feature_names if name not in kept],
        sampled=len(labels) > MAX_CLUSTERED, model=model, model_note=model_note,
    )


def _scores_by_cluster(
    project: Project, labels: dict[int, int], k: int
) -> tuple[dict[int, ClusterScores], list[int], ModelVersion | None, str]:
    """Per cluster: the current model's scores and the number of evaluation documents with gold."""
    gold = gold_documents(project=project, role=Document.Role.EVALUATION)
    # Texts are unique within a project (one copy of a text per project), names need not be.
    id_of_text = dict(Document.objects.filter(project=project, role=Document.Role.EVALUATION)
                      .values_list("text", "id"))
    clustered = [(labels[id_of_text[d.text]], d) for d in gold if id_of_text.get(d.text) in labels]
    counts = [0] * k
    for label, _ in clustered:
        counts[label] += 1

    model = ModelVersion.objects.filter(project=project, is_current=True).first()
    if model is None:
        return {}, counts, None, "There is no model yet: per-cluster scores appear after the first retrain."
    if not model.artifact or not Path(model.artifact).exists():
        return {}, counts, model, "The current model's file is no longer kept; scores appear after the next retrain."
    if not clustered:
        return {}, counts, model, ""
    try:
        tagger = pickle.loads(Path(model.artifact).read_bytes())
        predicted = tagger.predict([d for _, d in clustered])
    except Exception as error:  # noqa: BLE001 - an unreadable model only loses the scores
        log.warning("could not run model %s for the cluster scores: %s", model.pk, error)
        return {}, counts, model, f"The current model could not be run ({type(error).__name__}: {error})."
    scores = {}
    for label in range(k):
        members = [i for i, (c, _) in enumerate(clustered) if c == label]
        if not members:
            continue
        result = evaluate([clustered[i][1] for i in members], [predicted[i] for i in members])
        entity = result["entity"]
        scores[label] = ClusterScores(documents=len(members), p=entity["p"], r=entity["r"], f1=entity["f1"],
                                      support=result["counts"]["gold"])
    return scores, counts, model, ""


# Diverse batches ----------------------------------------------------------------------------------------------

def diverse_order(project: Project, ranking_id: int) -> list[int] | None:
    """Re-rank a staged ranking so that every batch of ``project.batch_size`` records spreads across clusters.

    Applies when the project keeps batches diverse and has a clustering; otherwise returns None and changes
    nothing. The records are taken batch after batch exactly as :func:`stylometry.diverse_batch` would take
    them from those left (clusters in turn, by their best remaining score); records without a cluster
    (imported after the clustering) are one more group. Writes ranks 1..n in that order, in one statement,
    and returns the document ids in the new rank order.
    """
    if not project.diverse_batches:
        return None
    clustering = current_clustering(project)
    if clustering is None:
        return None
    # Best first, ties by document id: the order activate_ranking would give.
    rows = list(PoolScore.objects.filter(ranking_id=ranking_id).order_by("-score", "document_id")
                .values_list("pk", "document_id"))
    groups = [clustering.labels.get(str(document_id), UNCLUSTERED) for _, document_id in rows]
    order = spread_batches(groups, max(project.batch_size, 1))
    score_ids = [rows[position][0] for position in order]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {PoolScore._meta.db_table} AS p SET rank = ordered.rank
            FROM unnest(%s::bigint[]) WITH ORDINALITY AS ordered(id, rank)
            WHERE p.id = ordered.id AND p.ranking_id = %s
            """,
            [score_ids, ranking_id],
        )
    return [rows[position][1] for position in order]


def spread_batches(groups: Sequence[Hashable], batch_size: int) -> list[int]:
    """Positions of a ranked list (best first) reordered batch by batch, each batch spread across groups.

    The same as calling ``stylometry.diverse_batch(scores, groups, batch_size)`` on the positions not taken
    yet, again and again, with scores falling along the list — in O(n) rather than O(n² / batch_size).
    """
    if batch_size < 1:
        raise ValueError(f"A batch holds at least one record, not {batch_size}.")
    queues: dict[Hashable, deque[int]] = {}
    for position, group in enumerate(groups):
        queues.setdefault(group, deque()).append(position)
    order: list[int] = []
    while queues:
        # Each batch starts with the group holding the best record left, then the next best group, ...
        rotation = sorted(queues, key=lambda group: queues[group][0])
        taken = 0
        while taken < batch_size and rotation:
            for group in rotation:
                if taken == batch_size:
                    break
                order.append(queues[group].popleft())
                taken += 1
            rotation = [group for group in rotation if queues[group]]
        for group in [group for group, queue in queues.items() if not queue]:
            del queues[group]
    return order
