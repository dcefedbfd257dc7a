"""The evaluation share drawn at import: about the share asked for, every label present, reproducible."""
from __future__ import annotations

import numpy as np
import pytest

from corpus.split import evaluation_size, stratified_evaluation


def labels_of(chosen, label_sets):
    return set().union(*(label_sets[i] for i in chosen)) if chosen else set()


@pytest.mark.parametrize(("n", "share", "expected"), [
    (10, 0.2, 2), (10, 0.0, 0), (0, 0.5, 0), (3, 0.1, 1), (2, 0.9, 1), (1, 0.5, 1), (7, 0.5, 4),
])
def test_size_is_the_share_rounded_with_at_least_one_and_a_pool_left(n, share, expected):
    assert evaluation_size(n, share) == expected


def test_a_share_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        evaluation_size(10, 1.5)


def test_every_label_present_is_in_the_evaluation_set_even_rare_ones():
    # 50 records: NAME in most, DATE in 10, PHONE in 2, EMAIL in only one.
    label_sets = [{"NAME"} for _ in range(50)]
    for i in range(0, 50, 5):
        label_sets[i] = label_sets[i] | {"DATE"}
    label_sets[7] = label_sets[7] | {"PHONE"}
    label_sets[31] = label_sets[31] | {"PHONE"}
    label_sets[44] = {"EMAIL"}
    for seed in range(20):
        chosen = stratified_evaluation(label_sets, 0.1, np.random.default_rng(seed))
        assert len(chosen) == 5
        assert labels_of(chosen, label_sets) == {"NAME", "DATE", "PHONE", "EMAIL"}
        pool = [i for i in range(50) if i not in chosen]
        # A label in two records or more keeps one in the pool; EMAIL, in one record, can only be evaluated.
        assert labels_of(pool, label_sets) == {"NAME", "DATE", "PHONE"}


def test_covering_the_labels_may_take_more_than_the_share():
    label_sets = [{"A"}, {"A"}, {"B"}, {"B"}, {"C"}, {"C"}, set(), set(), set(), set()]
    chosen = stratified_evaluation(label_sets, 0.1, np.random.default_rng(0))
    assert len(chosen) == 3
    assert labels_of(chosen, label_sets) == {"A", "B", "C"}


def test_the_same_seed_draws_the_same_records_and_another_seed_may_not():
    label_sets = [{"A"} if i % 3 else set() for i in range(60)]
    first = stratified_evaluation(label_sets, 0.25, np.random.default_rng(7))
    assert first == stratified_evaluation(label_sets, 0.25, np.random.default_rng(7))
    assert len(first) == 15
    assert any(stratified_evaluation(label_sets, 0.25, np.random.default_rng(seed)) != first for seed in range(5))


def test_records_without_labels_are_drawn_plainly_at_random():
    chosen = stratified_evaluation([set()] * 20, 0.2, np.random.default_rng(1))
    assert len(chosen) == 4 and len(set(chosen)) == 4 and all(0 <= i < 20 for i in chosen)
