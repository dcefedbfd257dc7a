import math

import numpy as np
import pytest

from learning.core.ordering import (
    diverse_batch,
    random_scores,
    rank_by_score,
    select,
    select_random,
    spread_batches,
)


def test_select_highest_first():
    scores = np.array([0.1, 3.0, -2.0, 2.0])
    assert select(scores, 2, np.random.default_rng(0)).tolist() == [1, 3]


def test_select_breaks_ties_at_random_but_reproducibly():
    scores = np.array([1.0, 5.0, 5.0, 5.0, 0.0])
    seen_first = set()
    for seed in range(30):
        picked = select(scores, 2, np.random.default_rng(seed))
        assert set(picked.tolist()) <= {1, 2, 3}
        assert len(set(picked.tolist())) == 2
        seen_first.add(int(picked[0]))
        again = select(scores, 2, np.random.default_rng(seed))
        assert again.tolist() == picked.tolist()
    assert seen_first == {1, 2, 3}


def test_select_more_than_the_pool_and_empty_pool():
    rng = np.random.default_rng(0)
    scores = np.array([0.5, np.nan, 2.0, -np.inf])
    assert select(scores, 10, rng).tolist()[:2] == [2, 0]
    assert sorted(select(scores, 10, rng).tolist()) == [0, 1, 2, 3]
    assert select(np.array([]), 3, rng).tolist() == []
    assert select(scores, 0, rng).tolist() == []


def test_select_random():
    rng = np.random.default_rng(0)
    picked = select_random(10, 4, rng)
    assert len(set(picked.tolist())) == 4 and picked.max() < 10
    assert sorted(select_random(3, 5, rng).tolist()) == [0, 1, 2]
    assert select_random(0, 5, rng).tolist() == []



def test_diverse_batch_takes_turns_across_clusters():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    clusters = [0, 0, 0, 1, 1, 2]
    # Cluster order by best score: 0 (0.9), 1 (0.6), 2 (0.4).
    assert diverse_batch(scores, clusters, 3) == [0, 3, 5]
    assert diverse_batch(scores, clusters, 4) == [0, 3, 5, 1]
    # Cluster 2 runs out after one; then 0 and 1 alternate, then 0 alone.
    assert diverse_batch(scores, clusters, 6) == [0, 3, 5, 1, 4, 2]
    assert diverse_batch(scores, clusters, 10) == [0, 3, 5, 1, 4, 2]
    assert diverse_batch(scores, clusters, 0) == []


def test_diverse_batch_orders_clusters_and_documents_by_score_then_index():
    # Cluster 7 holds the best score (index 2), so it goes first although its label is larger; then
    # cluster 3 gives its best (index 3), and cluster 7 having run out, its next best (index 1).
    assert diverse_batch([0.1, 0.2, 0.9, 0.3], [3, 3, 7, 3], 3) == [2, 3, 1]
    # All tied: the cluster of document 0 first, documents by index.
    assert diverse_batch([1.0, 1.0, 1.0, 1.0], [1, 0, 1, 0], 4) == [0, 1, 2, 3]


def test_diverse_batch_ranks_nan_and_minus_inf_last():
    assert diverse_batch([float("nan"), -math.inf, 0.1], [0, 0, 0], 3) == [2, 0, 1]
    with pytest.raises(ValueError, match="one cluster per score"):
        diverse_batch([0.1, 0.2], [0], 1)


def test_rank_by_score_best_first_ties_by_document_id():
    assert rank_by_score([7, 3, 5, 9], [0.5, 2.0, 0.5, float("nan")]) == [3, 5, 7, 9]
    assert rank_by_score([], []) == []
    with pytest.raises(ValueError, match="one score per document"):
        rank_by_score([1, 2], [0.1])


def test_random_scores_are_one_draw_per_document_whatever_the_piece():
    whole = random_scores(12, [4, 5, 6, 7])
    pieces = random_scores(12, [6, 7]) + random_scores(12, [4, 5])
    assert pieces[2:] + pieces[:2] == whole
    assert len(set(whole)) == 4 and all(0.0 <= value < 1.0 for value in whole)
    assert random_scores(13, [4]) != whole[:1]


def test_diverse_batch_is_the_first_batch_of_spread_batches():
    rng = np.random.default_rng(3)
    for _ in range(20):
        groups = rng.integers(0, 4, size=30).tolist()
        falling = [-position for position in range(30)]
        for k in (1, 4, 7):
            assert diverse_batch(falling, groups, k) == spread_batches(groups, k)[:k]
