import numpy as np
import pytest

from learning.core.recall_bias import (
    TAU_ALT_GRID,
    TAU_MAIN_GRID,
    apply_recall_bias,
    recall_biased_spans,
    recall_biased_tags,
    tune_recall_bias,
)
from corpus.text import tokenize
from corpus.types import Span

LABELS = ["O", "B-NAME", "I-NAME", "B-LOC", "I-LOC"]
MARGINALS = np.array(
    [
        [0.99, 0.005, 0.003, 0.001, 0.001],  # confident O
        [0.70, 0.05, 0.20, 0.03, 0.02],  # O, then I-NAME at 0.2
        [0.60, 0.00, 0.35, 0.05, 0.00],  # O, then I-NAME at 0.35
        [0.10, 0.80, 0.05, 0.05, 0.00],  # B-NAME
        [0.80, 0.00, 0.00, 0.05, 0.15],  # O, then I-LOC at 0.15
    ]
)


def test_grids_are_those_of_the_method():
    assert len(TAU_MAIN_GRID) == 11 and len(TAU_ALT_GRID) == 11
    assert TAU_MAIN_GRID[0] == 0.99999 and TAU_MAIN_GRID[-1] == 0.6
    assert TAU_ALT_GRID[0] == 0.00001 and TAU_ALT_GRID[-1] == 0.4


def test_relabels_unsure_o_tokens_and_repairs_bio():
    # t1 becomes I-NAME after O -> B-NAME; t2 continues it; t4 I-LOC after a NAME -> B-LOC.
    assert apply_recall_bias(MARGINALS, LABELS, 0.9, 0.1).tolist() == [0, 1, 2, 1, 3]
    assert recall_biased_tags(MARGINALS, LABELS, 0.9, 0.1) == ["O", "B-NAME", "I-NAME", "B-NAME", "B-LOC"]


def test_tau_alt_and_tau_main_limit_the_relabelling():
    # tau_alt 0.3: only t2 (0.35) qualifies, and after O it starts a span.
    assert recall_biased_tags(MARGINALS, LABELS, 0.9, 0.3) == ["O", "O", "B-NAME", "B-NAME", "O"]
    # tau_main 0.65: t1 (P(O) 0.70) and t4 (0.80) are too sure of O.
    assert recall_biased_tags(MARGINALS, LABELS, 0.65, 0.1) == ["O", "O", "B-NAME", "B-NAME", "O"]
    # tau_main 0.999 reaches the confident token too when tau_alt allows its 0.005.
    assert recall_biased_tags(MARGINALS, LABELS, 0.999, 0.005)[0] == "B-NAME"
    # The strictest pair changes nothing here: plain posterior decoding.
    assert apply_recall_bias(MARGINALS, LABELS, 0.6, 0.4).tolist() == MARGINALS.argmax(axis=1).tolist()


def test_spans_with_thresholds():
    text = "a b c d e"
    spans = recall_biased_spans(tokenize(text), MARGINALS, LABELS, 0.9, 0.1)
    assert spans == [Span(2, 5, "NAME"), Span(6, 7, "NAME"), Span(8, 9, "LOC")]


def test_missing_outside_label_is_an_error():
    with pytest.raises(ValueError, match="no 'O'"):
        apply_recall_bias(np.ones((1, 2)) / 2, ["B-X", "I-X"], 0.9, 0.1)


def _dev_set():
    """10 sure PHI, 4 PHI and 8 non-PHI all at P(O)=0.8 / P(B-X)=0.2, 20 sure non-PHI; two documents."""
    labels = ["O", "B-X", "I-X"]
    rows = [[0.1, 0.9, 0.0]] * 10 + [[0.8, 0.2, 0.0]] * 12 + [[1.0, 0.0, 0.0]] * 20
    gold = ["B-X"] * 10 + ["B-X"] * 4 + ["O"] * 8 + ["O"] * 20
    m = np.array(rows)
    return [m[:15], m[15:]], [gold[:15], gold[15:]], labels


def test_tune_f1_keeps_precision():
    marginals, gold, labels = _dev_set()
    # Relabelling the uncertain group gives P 14/22, R 1 (F1 0.778) against P 1, R 10/14 (F1 0.833):
    # no relabelling wins, and the mildest pair that relabels nothing is chosen.
    chosen = tune_recall_bias(marginals, gold, labels, beta=1)
    assert chosen.score == pytest.approx(10 / 12)
    assert (chosen.tau_main, chosen.tau_alt) == (0.6, 0.4)


def test_tune_f4_buys_recall():
    marginals, gold, labels = _dev_set()
    tau_main, tau_alt, score = tune_recall_bias(marginals, gold, labels, beta=4)
    # F4 = 17 * (7/11) / (16 * 7/11 + 1) = 119/123; the mildest pair reaching it is (0.85, 0.2).
    assert score == pytest.approx(119 / 123)
    assert (tau_main, tau_alt) == (0.85, 0.2)
    relabelled = [t for m in marginals for t in recall_biased_tags(m, labels, tau_main, tau_alt)]
    assert relabelled.count("B-X") == 22


def test_tune_checks_lengths():
    marginals, gold, labels = _dev_set()
    with pytest.raises(ValueError, match="document 1"):
        tune_recall_bias(marginals, [gold[0], gold[1][:-1]], labels, beta=1)
