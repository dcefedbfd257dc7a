"""How a retrain cuts the pool into scoring tasks (``learning.services.retrain.shards``), without a database."""
from __future__ import annotations

import pytest

from learning.services.retrain import shards


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11, 39])
def test_a_small_pool_keeps_its_tasks_whole(n):
    ids = list(range(100, 100 + n))
    parts = shards(ids, size=10)
    assert [len(part) for part in parts] == [10] * (n // 10) + ([n % 10] if n % 10 else [])
    assert [i for part in parts for i in part] == ids


@pytest.mark.parametrize("n, sizes", [
    (40, [10, 10, 10, 3, 3, 3, 1]),
    (41, [10, 10, 10, 3, 3, 3, 2]),
    (49, [10, 10, 10, 5, 5, 5, 4]),
    (50, [10, 10, 10, 10, 3, 3, 3, 1]),
    (4965, None),
])
def test_a_larger_pool_ends_in_four_short_tasks(n, sizes):
    ids = [7 * i for i in range(n)]
    parts = shards(ids, size=10 if sizes else 250)
    lengths = [len(part) for part in parts]
    if sizes:
        assert lengths == sizes
    else:  # the loop's pool: 18 tasks of 250, then 465 documents in four
        assert lengths == [250] * 18 + [117, 117, 117, 114]
    assert [i for part in parts for i in part] == ids  # every document once, in its order
    assert max(lengths[-4:]) <= lengths[0] // 2 + 1
