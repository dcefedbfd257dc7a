"""A share of a corpus set aside at random as its evaluation set, holding every label the corpus has.

A plain random draw of 20% of a small corpus easily misses a rare PHI type, and a metric per type is then
blank. So the draw first covers the labels, rarest first — for each label the evaluation set lacks, one
record carrying it is drawn — and then fills the rest of the share at random. Each label that occurs in two
records or more keeps at least one in the pool as well, so the tagger can learn it; a label found in a
single record can only be on one side: it goes to the evaluation set, which must hold every label.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def evaluation_size(n_records: int, share: float) -> int:
    """How many of ``n_records`` a ``share`` (0…1) sets aside: at least one for a share above nothing, and
    never every record of a corpus of two or more (the pool keeps one)."""
    if not 0 <= share <= 1:
        raise ValueError(f"the evaluation share is between 0 and 1, got {share!r}")
    if share == 0 or n_records == 0:
        return 0
    wanted = max(1, round(share * n_records))
    return min(wanted, n_records - 1) if n_records > 1 else wanted


def stratified_evaluation(label_sets: Sequence[set[str] | frozenset[str]], share: float,
                          rng: np.random.Generator) -> list[int]:
    """The indices (ascending) of the records set aside, ``label_sets[i]`` being the labels record ``i``
    holds. About ``share`` of the records, more only when covering every label takes more."""
    n_records = len(label_sets)
    target = evaluation_size(n_records, share)
    if target == 0:
        return []
    holders: dict[str, list[int]] = {}
    for index, labels in enumerate(label_sets):
        for label in labels:
            holders.setdefault(label, []).append(index)
    in_pool = {label: len(records) for label, records in holders.items()}
    chosen: set[int] = set()

    def set_aside(index: int) -> None:
        chosen.add(index)
        for label in label_sets[index]:
            in_pool[label] -= 1

    def covered(label: str) -> bool:
        return in_pool[label] < len(holders[label])

    for label in sorted(holders, key=lambda name: (len(holders[name]), name)):
        if not covered(label):  # none of its records is set aside yet, so drawing one leaves the others
            records = holders[label]
            set_aside(int(records[rng.integers(len(records))]))
    rest = [int(index) for index in rng.permutation(n_records) if int(index) not in chosen]
    skipped = []
    for index in rest:
        if len(chosen) >= target:
            break
        # Not the pool's last record of a label that has more than one.
        if all(in_pool[label] > 1 or len(holders[label]) == 1 for label in label_sets[index]):
            set_aside(index)
        else:
            skipped.append(index)
    for index in skipped[:max(0, target - len(chosen))]:
        set_aside(index)
    return sorted(chosen)
