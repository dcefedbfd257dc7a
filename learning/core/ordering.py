"""The one home of the order in which pool records are taken: from document scores to a ranking.

A query strategy (``learning.core.strategies``) turns each document's marginals into a score; this module
decides the order those scores give, for the simulation (:func:`select`, :func:`select_random`) and for
the live ranking (:func:`rank_by_score`, :func:`random_scores`, then :func:`spread_batches` when the
project keeps its batches diverse across stylometric clusters). Everything here is pure: indices, scores
and groups in, positions out. The database is written by ``annotator.services.ranking`` alone, which takes
the order made here.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = [
    "UNCLUSTERED",
    "diverse_batch",
    "random_scores",
    "rank_by_score",
    "select",
    "select_random",
    "spread_batches",
]

#: Group of the records that have no stylometric cluster (imported after the clustering was computed).
UNCLUSTERED = -1


def select(scores: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of the ``k`` highest scores, best first; equal scores in an order drawn from ``rng``.

    ``k`` larger than the pool gives the whole pool; an empty pool gives an empty array. NaN ranks with
    ``-inf``, below every real score.
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if k < 0:
        raise ValueError(f"batch size must be >= 0, got {k}")
    n = scores.shape[0]
    if n == 0 or k == 0:
        return np.zeros(0, dtype=np.int64)
    keys = np.where(np.isnan(scores), -np.inf, scores)
    shuffled = rng.permutation(n)
    # A stable sort of the shuffled pool keeps equal scores in the random order of the shuffle.
    order = shuffled[np.argsort(-keys[shuffled], kind="stable")]
    return order[: min(k, n)].astype(np.int64)


def select_random(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``min(k, n)`` distinct indices of a pool of ``n``, uniformly at random."""
    if n < 0 or k < 0:
        raise ValueError(f"pool size and batch size must be >= 0, got n={n}, k={k}")
    if n == 0 or k == 0:
        return np.zeros(0, dtype=np.int64)
    return rng.permutation(n)[: min(k, n)].astype(np.int64)


def random_scores(draw: int, document_ids: Sequence[int]) -> list[float]:
    """The Random strategy's scores: one uniform draw per (``draw``, document), so whichever process or
    attempt scores a document — in whatever piece of the pool — it gets the same value."""
    return [float(np.random.default_rng([draw, document_id]).random()) for document_id in document_ids]


def rank_by_score(document_ids: Sequence[int], scores: Sequence[float]) -> list[int]:
    """``document_ids`` best score first, ties by document id; NaN ranks with ``-inf``, last."""
    if len(document_ids) != len(scores):
        raise ValueError(f"Expected one score per document, got {len(scores)} for {len(document_ids)}.")
    ids = np.asarray(document_ids, dtype=np.int64)
    keys = np.asarray(scores, dtype=np.float64)
    keys = np.where(np.isnan(keys), -np.inf, keys)
    # lexsort sorts by its last key first: by falling score, then by rising id.
    return ids[np.lexsort((ids, -keys))].tolist()


def spread_batches(groups: Sequence[Hashable], batch_size: int) -> list[int]:
    """Positions of a ranked list (best first) reordered batch by batch, each batch spread across groups.

    Each batch starts with the group holding the best record left, then the next best group, and so on,
    each giving its best record left, round after round until the batch is full; a group that runs out
    drops out. The same as calling :func:`diverse_batch` on the positions not taken yet, again and again,
    with scores falling along the list — in O(n) rather than O(n² / batch_size).
    """
    if batch_size < 1:
        raise ValueError(f"A batch holds at least one record, not {batch_size}.")
    queues: dict[Hashable, deque[int]] = {}
    for position, group in enumerate(groups):
        queues.setdefault(group, deque()).append(position)
    order: list[int] = []
    while queues:
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


def diverse_batch(scores: Sequence[float], clusters: Sequence[Hashable], k: int) -> list[int]:
    """Indices of up to ``k`` documents with high scores, spread across clusters, in the order chosen.

    Clusters take turns, ordered by their best score (ties: the cluster whose best document comes
    first); each turn a cluster gives its best document not yet chosen (ties by index). A cluster that runs
    out drops out of the rotation, so the others fill the batch. A NaN score counts as ``-inf``. With
    ``k`` at least the pool size every index is returned. This is the first batch of :func:`spread_batches`.
    """
    values = np.asarray(scores, dtype=float)
    groups = np.asarray(clusters)
    if values.ndim != 1 or groups.shape != values.shape:
        raise ValueError(f"Expected one cluster per score, got {groups.shape} clusters for {values.shape} scores.")
    if k <= 0:
        return []
    values = np.where(np.isnan(values), -np.inf, values)
    # Best first, ties by index: a stable sort on the negated scores.
    ranked = np.argsort(-values, kind="stable")
    positions = spread_batches([groups[index].item() for index in ranked], k)[:k]
    return [int(ranked[position]) for position in positions]
