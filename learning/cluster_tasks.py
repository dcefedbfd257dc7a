"""The Celery task that computes a project's stylometric clusters on a worker (projects too large to
cluster within a request). Registered by an import at the end of ``learning.tasks``, the module Celery
discovers."""
from __future__ import annotations

from celery import shared_task
from django.db import transaction

from learning.clusters import run_clustering
from learning.models import Clustering


@shared_task(name="learning.cluster")
def cluster(clustering_id: int) -> str:
    """Compute a queued clustering; a repeated message finds it claimed and does nothing."""
    clustering = run_clustering(clustering_id)
    if clustering is None:
        return "not claimed"
    return f"{clustering.status}: {clustering.k} clusters" if not clustering.error else f"failed: {clustering.error}"


def enqueue(clustering: Clustering) -> None:
    """Send a queued clustering to the workers once the transaction that created it has committed."""
    transaction.on_commit(lambda: cluster.delay(clustering.pk))
