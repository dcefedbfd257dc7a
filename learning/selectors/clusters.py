"""What the stylometric clusters page shows: the project's clusters with their sizes, shares of the whole
and of the annotated set, mean features and the current model's scores per cluster.

The scores are read as stored by ``learning.services.clustering.store_cluster_scores`` (when the clustering
finished or the model was published); showing the page never loads a model."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from annotator.models import Document, Project
from annotator.selectors import gold_documents
from corpus.types import Document as CorpusDocument
from learning.models import Clustering, ModelVersion
from learning.services import model_store

log = logging.getLogger(__name__)

#: Projects with at most this many documents are clustered in the request; larger ones on a worker.
SYNC_LIMIT = 2000
#: Ward linkage and the Dunn index need all pairwise distances (n² memory: 4,000 documents take ~350 MB
#: and ~4 s). Beyond that a seeded random sample is clustered and every other document joins the cluster
#: whose centre is nearest in the same standardised features.
MAX_CLUSTERED = 4000
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

    by_cluster, evaluation_counts, model, model_note = _scores_by_cluster(project, clustering, labels)
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


def clustered_evaluation_gold(project: Project, labels: dict[int, int]) -> list[tuple[int, CorpusDocument]]:
    """The project's evaluation documents with gold that the clustering covers, each with its cluster."""
    gold = gold_documents(project=project, role=Document.Role.EVALUATION)
    # Texts are unique within a project (one copy of a text per project), names need not be.
    id_of_text = dict(Document.objects.filter(project=project, role=Document.Role.EVALUATION)
                      .values_list("text", "id"))
    return [(labels[id_of_text[d.text]], d) for d in gold if id_of_text.get(d.text) in labels]


def _scores_by_cluster(
    project: Project, clustering: Clustering, labels: dict[int, int]
) -> tuple[dict[int, ClusterScores], list[int], ModelVersion | None, str]:
    """Per cluster: the current model's stored scores and the number of evaluation documents with gold."""
    counts = [0] * clustering.k
    for label, _ in clustered_evaluation_gold(project, labels):
        counts[label] += 1

    model = ModelVersion.objects.filter(project=project, is_current=True).first()
    if model is None:
        return {}, counts, None, "There is no model yet: per-cluster scores appear after the first retrain."
    if not model_store.exists(model.artifact):
        return {}, counts, model, "The current model's file is no longer kept; scores appear after the next retrain."
    stored = clustering.model_scores or {}
    if stored.get("model_version") != model.pk:
        return {}, counts, model, ("Per-cluster scores will appear after the next model is published "
                                    "or the clusters are recomputed.")
    if stored.get("error"):
        return {}, counts, model, f"The current model could not be run ({stored['error']})."
    scores = {
        int(label): ClusterScores(documents=int(row["documents"]), p=row["p"], r=row["r"], f1=row["f1"],
                                  support=int(row["support"]))
        for label, row in (stored.get("clusters") or {}).items()
    }
    return scores, counts, model, ""
