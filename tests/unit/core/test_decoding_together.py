"""Records decoded together (``decode_many``, one Viterbi stepping through all the records whose token-wise
labels are not a valid sequence) get exactly the labels each gets alone, ties included."""
from __future__ import annotations

import numpy as np

from learning.core.decoding import decode, decode_many, decode_tokenwise, is_bio_valid

# I-X before B-X in one type, an I- without its B- and a B- without its I-: every branch of the ties.
LABELS = ["O", "B-CALLE", "I-CALLE", "I-PAIS", "B-PAIS", "I-ID", "B-FECHA"]


def _records(rng: np.random.Generator) -> list[np.ndarray]:
    records = []
    for _ in range(int(rng.integers(2, 7))):
        m = rng.dirichlet(np.full(len(LABELS), rng.choice([0.05, 0.3, 1.0])), size=int(rng.integers(0, 30)))
        if rng.random() < 0.3:
            m = np.round(m, 1)  # ties between labels and between paths
        if rng.random() < 0.2 and m.shape[0]:
            m[rng.integers(0, m.shape[0])] = 0.0
        records.append(m)
    return records


def test_the_labels_of_each_record_alone():
    invalid = 0
    for seed in range(2000):
        rng = np.random.default_rng(seed)
        records = _records(rng)
        bias = None if seed % 3 == 0 else (float(rng.choice([0.6, 0.9, 0.999])), float(rng.choice([0.0, 0.01, 0.2])))
        together = decode_many(records, LABELS, bias)
        assert [t.tolist() for t in together] == [decode(m, LABELS, bias).tolist() for m in records], seed
        assert all(is_bio_valid(t, LABELS) for t in together)
        invalid += sum(not is_bio_valid(decode_tokenwise(m, LABELS, bias), LABELS) for m in records) >= 2
    assert invalid > 1000  # most draws have two records or more to mend: the shared Viterbi ran


def test_no_records_and_empty_ones():
    assert decode_many([], LABELS) == []
    assert [t.tolist() for t in decode_many([np.zeros((0, 7)), np.zeros((0, 7))], LABELS, (0.9, 0.1))] == [[], []]
