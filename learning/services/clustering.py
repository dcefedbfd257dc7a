"""Stylometric clusters of a project's documents (ALGORITHMS.md §8), computed and stored.

A clustering covers every document of the project, pool and evaluation, as it was when computed; records
imported later have no cluster until the next one and form a group of their own when batches are spread
(``learning.services.retrain`` orders a ranking's batches across clusters with ``learning.core.ordering``).
The newest finished clustering is the project's; a newer one replaces the older rows. The page reads them
through ``learning.selectors.clusters``.

The current model's scores per cluster are computed here, where a model may be loaded (verified first, see
``learning.services.model_store.load_model``): when a clustering finishes and when a new model is published. They
are stored on the clustering, so that the page only reads them.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotator.models import Document, Project
from learning.core import stylometry
from learning.core.artifacts import ArtifactRejected
from learning.core.metrics import evaluate
from learning.models import Clustering, ModelVersion
from learning.selectors import clusters as cluster_selectors
from learning.services.model_store import load_model

log = logging.getLogger(__name__)

#: The sample is drawn with a fixed seed: clustering the same documents again gives the same clusters.
SAMPLE_SEED = 0
#: A clustering queued or running for longer than this is taken for dead (its worker crashed), so a
#: lead may ask for a new one.
STALE_AFTER = timedelta(hours=1)
#: Group of the documents imported after the clustering was computed.
UNCLUSTERED = -1
_FEATURE_CHUNK = 500


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
    try:
        store_cluster_scores(project=project)
    except Exception:  # noqa: BLE001 - the clusters stand; the page says the scores are missing
        log.exception("could not score the clusters of project %s", project.pk)
    clustering.refresh_from_db()
    return clustering


def store_cluster_scores(*, project: Project) -> dict | None:
    """Score the current model on each cluster's evaluation documents (exact-match entities) and store the
    result on the project's clustering as ``{"model_version", "clusters": {label: {documents, p, r, f1,
    support}}, "error"}``; None when there is no clustering or no current model with a file.

    A model file that fails verification is not loaded: the error is stored instead of scores."""
    clustering = cluster_selectors.current_clustering(project)
    model = ModelVersion.objects.filter(project=project, is_current=True).first()
    if clustering is None or model is None or not model.artifact:
        return None
    labels = {int(key): int(value) for key, value in clustering.labels.items()}
    clustered = cluster_selectors.clustered_evaluation_gold(project, labels)
    stored: dict = {"model_version": model.pk, "clusters": {}, "error": ""}
    if clustered:
        try:
            tagger = load_model(model.artifact, project_id=project.pk)
            predicted = tagger.predict([document for _, document in clustered])
        except ArtifactRejected as error:
            log.error("model %s of project %s was refused and not loaded: %s", model.pk, project.pk, error)
            stored["error"] = str(error)
        except Exception as error:  # noqa: BLE001 - an unreadable model only loses the scores
            log.warning("could not run model %s for the cluster scores: %s", model.pk, error)
            stored["error"] = f"{type(error).__name__}: {error}"
        else:
            for label in range(clustering.k):
                members = [i for i, (c, _) in enumerate(clustered) if c == label]
                if not members:
                    continue
                result = evaluate([clustered[i][1] for i in members], [predicted[i] for i in members])
                entity = result["entity"]
                stored["clusters"][str(label)] = {
                    "documents": len(members), "p": _score(entity["p"]), "r": _score(entity["r"]),
                    "f1": _score(entity["f1"]), "support": int(result["counts"]["gold"]),
                }
    Clustering.objects.filter(pk=clustering.pk).update(model_scores=stored)
    return stored


def _score(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def compute_clustering(project: Project) -> Clustering:
    """Cluster all of ``project``'s documents now, in this process; the stored row (done or failed)."""
    clustering = Clustering.objects.create(project=project)
    finished = run_clustering(clustering.pk)
    return finished if finished is not None else Clustering.objects.get(pk=clustering.pk)


def _cluster_project(project: Project) -> tuple[list[int], stylometry.StyleClusters]:
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
    if matrix.shape[0] <= cluster_selectors.MAX_CLUSTERED:
        return document_ids, stylometry.cluster_features(matrix, names)
    return document_ids, _cluster_sample(matrix, names, seed=SAMPLE_SEED)


def _cluster_sample(matrix: np.ndarray, names: Sequence[str], *, seed: int) -> stylometry.StyleClusters:
    """Ward clustering of a random sample of the rows; the other rows go to the nearest cluster centre."""
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(matrix.shape[0], size=cluster_selectors.MAX_CLUSTERED, replace=False))
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
    return stylometry.StyleClusters(
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
