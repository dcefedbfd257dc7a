import json

import numpy as np
import pytest

from learning.core.recall_bias import (
    SECTION_3_TAU_MAIN,
    TAU_ALT_GRID,
    TAU_MAIN_GRID,
    apply_recall_bias,
    recall_biased_spans,
    recall_biased_tags,
    stored_thresholds,
    tune_recall_bias,
    tune_recall_bias_per_label,
)
from learning.core.decoding import decode, decode_tokenwise, decoded_tags, is_bio_valid
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


def test_grids_are_those_of_the_method_with_four_values_where_high_recall_lies():
    assert len(SECTION_3_TAU_MAIN) == 11 and len(TAU_ALT_GRID) == 11
    assert SECTION_3_TAU_MAIN[0] == 0.99999 and SECTION_3_TAU_MAIN[-1] == 0.6
    assert TAU_ALT_GRID[0] == 0.00001 and TAU_ALT_GRID[-1] == 0.4
    assert set(SECTION_3_TAU_MAIN) <= set(TAU_MAIN_GRID)
    assert sorted(set(TAU_MAIN_GRID) - set(SECTION_3_TAU_MAIN)) == [0.992, 0.994, 0.996, 0.998]
    assert list(TAU_MAIN_GRID) == sorted(TAU_MAIN_GRID, reverse=True)


def test_the_finer_grid_reaches_a_pair_that_section_3_jumps_over():
    # Gold-PHI tokens the model calls O: 10 with P(O) 0.985, 80 with P(O) 0.995 (their PHI mass split over two
    # labels, so τ_alt cannot tell them from the next ones), 10 with P(O) 0.9995; non-PHI tokens called O with
    # P(O) 0.9985 (40 of them) and 0.9995 (400).
    rows = ([[0.985, 0.015, 0.0]] * 10 + [[0.995, 0.0025, 0.0025]] * 80 + [[0.9995, 0.0005, 0.0]] * 10
            + [[0.9985, 0.0015, 0.0]] * 40 + [[0.9995, 0.0005, 0.0]] * 400)
    gold = ["B-X"] * 100 + ["O"] * 440
    marginals, labels = [np.array(rows)], ["O", "B-X", "B-Y"]
    fine = tune_recall_bias(marginals, [gold], labels, beta=4)
    coarse = tune_recall_bias(marginals, [gold], labels, beta=4, tau_main_grid=SECTION_3_TAU_MAIN)
    # τ_main 0.996 catches the 90 PHI tokens under it and nothing else; §3 has 0.99 (10 of them) or 0.999
    # (the 90, with the 40 false positives).
    assert (fine.tau_main, fine.tau_alt) == (0.996, 0.001)
    assert (coarse.tau_main, coarse.tau_alt) == (0.999, 0.001)
    assert fine.score == pytest.approx(17 * 0.9 / (16 + 0.9)) and fine.score > coarse.score


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


# --------------------------------------------------------------------------------------------------
# Per-label thresholds


def _two_types():
    """Type A: 10 sure PHI, then 4 PHI and 8 non-PHI at P(O)=0.8 / P(B-A)=0.2. Type B: 10 sure PHI, then 1 PHI
    and 30 non-PHI at P(O)=0.8 / P(B-B)=0.2. Plus 20 sure non-PHI; three documents."""
    labels = ["O", "B-A", "I-A", "B-B", "I-B"]
    rows = ([[0.1, 0.9, 0, 0, 0]] * 10 + [[0.8, 0.2, 0, 0, 0]] * 12
            + [[0.1, 0, 0, 0.9, 0]] * 10 + [[0.8, 0, 0, 0.2, 0]] * 31 + [[1.0, 0, 0, 0, 0]] * 20)
    gold = (["B-A"] * 10 + ["B-A"] * 4 + ["O"] * 8
            + ["B-B"] * 10 + ["B-B"] * 1 + ["O"] * 30 + ["O"] * 20)
    m = np.array(rows, dtype=float)
    cuts = [0, 30, 60, len(rows)]
    return [m[a:b] for a, b in zip(cuts, cuts[1:])], [gold[a:b] for a, b in zip(cuts, cuts[1:])], labels


def test_per_label_f4_relabels_only_the_type_where_it_pays():
    marginals, gold, labels = _two_types()
    # One pair for all: relabelling both groups gives P 25/63, R 1, F4 425/463 against 0.81 without.
    single = tune_recall_bias(marginals, gold, labels, beta=4)
    assert (single.tau_main, single.tau_alt) == (0.85, 0.2) and single.score == pytest.approx(425 / 463)
    tuned = tune_recall_bias_per_label(marginals, gold, labels, beta=4, min_support=5)
    a, b = tuned.by_type["A"], tuned.by_type["B"]
    # A: relabel, P 14/22 R 1, F4 238/246. B: relabelling gives P 11/41 R 1, F4 187/217 < 170/186 without.
    assert (a.tau_main, a.tau_alt, a.tuned) == (0.85, 0.2, True)
    assert a.score == pytest.approx(238 / 246) and a.precision == pytest.approx(14 / 22) and a.recall == 1.0
    assert (b.tau_main, b.tau_alt) == (0.6, 0.4)  # the mildest pair that relabels nothing
    assert b.score == pytest.approx(170 / 186) and b.recall == pytest.approx(10 / 11)
    assert (a.gold_tokens, a.predicted_tokens, b.gold_tokens, b.predicted_tokens) == (14, 22, 11, 10)
    # Overall: P 24/32, R 24/25, above the single pair's F4.
    assert (tuned.precision, tuned.recall) == (pytest.approx(0.75), pytest.approx(0.96))
    assert tuned.score == pytest.approx(17 * 0.75 * 0.96 / (16 * 0.75 + 0.96))
    assert tuned.score > single.score
    assert tuned.thresholds == {"A": (0.85, 0.2), "B": (0.6, 0.4)}
    tags = [t for m in marginals for t in decoded_tags(m, labels, tuned.thresholds)]
    assert tags.count("B-A") == 22 and tags.count("B-B") == 10
    assert tuned.to_json()["by_type"]["A"]["tau_main"] == 0.85


def test_per_label_falls_back_to_the_single_pair_without_support():
    marginals, gold, labels = _two_types()
    tuned = tune_recall_bias_per_label(marginals, gold, labels, beta=4, min_support=12)
    # B has 11 gold PHI tokens among its candidates: it keeps the pair tuned over all tokens.
    assert tuned.by_type["B"][:2] == (0.85, 0.2) and not tuned.by_type["B"].tuned
    assert tuned.by_type["A"][:2] == (0.85, 0.2) and tuned.by_type["A"].tuned


def test_a_beta_per_label():
    marginals, gold, labels = _two_types()
    # With β = 1 for A, relabelling its group (F1 0.778) loses to keeping its precision (F1 0.833).
    tuned = tune_recall_bias_per_label(marginals, gold, labels, beta={"A": 1, "B": 4}, min_support=5)
    assert tuned.thresholds == {"A": (0.6, 0.4), "B": (0.6, 0.4)}
    assert tuned.by_type["A"].score == pytest.approx(10 / 12)
    with pytest.raises(ValueError, match="names none of the PHI types"):
        tune_recall_bias_per_label(marginals, gold, labels, beta={"C": 4})
    with pytest.raises(ValueError, match="one β"):
        tune_recall_bias_per_label(marginals, gold, labels, beta={"A": 1, "B": 4}, objective="overall")
    with pytest.raises(ValueError, match="objective"):
        tune_recall_bias_per_label(marginals, gold, labels, beta=4, objective="best")


def test_a_type_the_beta_per_type_leaves_out_keeps_the_model_s_labels():
    marginals, gold, labels = _two_types()
    tuned = tune_recall_bias_per_label(marginals, gold, labels, beta={"A": 4, "C": 10}, min_support=5)
    assert set(tuned.by_type) == {"A"} and tuned.thresholds == {"A": (0.85, 0.2)}
    assert tuned.beta == {"A": 4.0}
    # B's 10 sure tokens stay PHI, its 31 unsure ones O: overall P (14 + 10) / (22 + 10), R 24 / 25.
    assert (tuned.precision, tuned.recall) == (pytest.approx(0.75), pytest.approx(0.96))
    tags = [t for m in marginals for t in decoded_tags(m, labels, tuned.thresholds)]
    assert tags.count("B-A") == 22 and tags.count("B-B") == 10
    stored = tuned.to_json()
    assert stored["betas"] == {"A": 4.0} and stored_thresholds(stored) == {"A": (0.85, 0.2)}


def test_stored_thresholds_read_back_either_kind():
    marginals, gold, labels = _two_types()
    single = tune_recall_bias(marginals, gold, labels, beta=4)
    assert stored_thresholds({"beta": 4, **single.to_json()}) == single.thresholds == (0.85, 0.2)
    per_type = tune_recall_bias_per_label(marginals, gold, labels, beta=4, min_support=5)
    assert stored_thresholds(json.loads(json.dumps(per_type.to_json()))) == per_type.thresholds
    assert stored_thresholds({}) is None and stored_thresholds(None) is None
    assert stored_thresholds({"beta": 4}) is None


def test_overall_objective_never_scores_below_the_single_pair():
    rng = np.random.default_rng(7)
    labels = ["O", "B-A", "I-A", "B-B", "I-B", "B-C", "I-C"]
    for _ in range(20):
        m = rng.dirichlet(np.full(len(labels), 0.3), size=400)
        m[:, 0] += rng.uniform(0, 3)
        m /= m.sum(axis=1, keepdims=True)
        gold = [labels[int(rng.integers(len(labels)))] if rng.random() < 0.3 else "O" for _ in range(400)]
        single = tune_recall_bias([m], [gold], labels, beta=4)
        overall = tune_recall_bias_per_label([m], [gold], labels, beta=4, objective="overall", min_support=1)
        assert overall.score >= single.score - 1e-12
        per_label = tune_recall_bias_per_label([m], [gold], labels, beta=4, min_support=1)
        for kind, chosen in per_label.by_type.items():
            # No pair scores better on a type's candidates than the one chosen for it.
            at_single = tune_recall_bias_per_label([m], [gold], labels, beta=4, min_support=10**9).by_type[kind]
            assert chosen.score >= at_single.score - 1e-12


def test_per_label_thresholds_decode_like_one_pair_when_they_agree():
    rng = np.random.default_rng(3)
    labels = ["O", "B-A", "I-A", "B-B", "I-B"]
    for _ in range(200):
        m = rng.dirichlet(np.full(len(labels), 0.3), size=12)
        pair = (float(rng.choice(TAU_MAIN_GRID)), float(rng.choice(TAU_ALT_GRID)))
        assert decode(m, labels, {"A": pair, "B": pair}).tolist() == decode(m, labels, pair).tolist()
        assert (decode_tokenwise(m, labels, {"A": pair, "B": pair}).tolist()
                == decode_tokenwise(m, labels, pair).tolist())
        # A type the mapping leaves out is never relabelled; the decoded sequence stays valid.
        assert is_bio_valid(decode(m, labels, {"A": pair}), labels)
        only_a = decode_tokenwise(m, labels, {"A": pair})
        assert not ((m.argmax(axis=1) == 0) & np.isin(only_a, [3, 4])).any()
        assert ((only_a != 0) == ((m.argmax(axis=1) != 0) | (decode_tokenwise(m, labels, pair) != 0)
                                  & np.isin(m[:, 1:].argmax(axis=1) + 1, [1, 2]))).all()


def test_per_label_decoding_by_hand():
    # Token 1 is O with runner-up I-NAME (0.2); token 4 is O with runner-up I-LOC (0.15).
    assert recall_biased_tags(MARGINALS, LABELS, 0.9, 0.1) == ["O", "B-NAME", "I-NAME", "B-NAME", "B-LOC"]
    assert decoded_tags(MARGINALS, LABELS, {"NAME": (0.9, 0.1), "LOC": (0.6, 0.4)}) == [
        "O", "B-NAME", "I-NAME", "B-NAME", "O"]
    assert decoded_tags(MARGINALS, LABELS, {"NAME": (0.65, 0.3), "LOC": (0.9, 0.1)}) == [
        "O", "O", "B-NAME", "B-NAME", "B-LOC"]
