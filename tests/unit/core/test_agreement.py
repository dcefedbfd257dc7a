"""Agreement figures against values worked by hand (the working is in the comments)."""
from __future__ import annotations

import pytest

from corpus.types import Span
from learning.core.agreement import RecordSubmissions, agreement, span_matches

TEXT = "Ana Ruiz vive en Madrid."  # tokens: Ana Ruiz vive en Madrid .
A = [Span(0, 8, "NAME"), Span(17, 23, "CITY")]
B = [Span(0, 3, "NAME"), Span(17, 23, "CITY")]
C = [Span(0, 8, "NAME")]


def test_two_annotators_overall_and_per_label():
    figures = agreement([RecordSubmissions(TEXT, {"a": A, "b": B})])
    overall = figures["overall"]
    assert figures["records"] == 1 and figures["annotators"] == ["a", "b"] and figures["tokens"] == 6
    assert figures["unanimous"] == 0 and overall["spans"] == 4
    assert overall["strict_f1"] == pytest.approx(2 / 4)  # only Madrid is the same span
    assert overall["relaxed_f1"] == pytest.approx(4 / 4)  # Ana Ruiz overlaps Ana
    # tokens a: NAME NAME O O CITY O, b: NAME O O O CITY O; p_o = 5/6,
    # p_e = 2/6·1/6 + 3/6·4/6 + 1/6·1/6 = 15/36, κ = (30 − 15) / (36 − 15) = 15/21
    assert overall["kappa"] == pytest.approx(15 / 21)
    # coincidences o_NN = 2, o_N,O = o_O,N = 1, o_OO = 6, o_CC = 2; n_O = 7, n_C = 2, n_N = 3, n = 12;
    # D_o = 2/12, D_e = 2·(7·2 + 7·3 + 2·3) / (12·11) = 82/132, α = 1 − D_o/D_e = 30/41
    assert overall["alpha"] == pytest.approx(30 / 41)

    name, city = figures["per_label"]["NAME"], figures["per_label"]["CITY"]
    assert (name["strict_f1"], name["relaxed_f1"], name["spans"]) == (0.0, 1.0, 2)
    # NAME or not: a 1 1 0 0 0 0, b 1 0 0 0 0 0; p_e = 2/6·1/6 + 4/6·5/6 = 22/36, κ = 8/14
    assert name["kappa"] == pytest.approx(8 / 14)
    # o_11 = 2, o_10 = o_01 = 1, o_00 = 8; D_o = 2/12, D_e = 2·3·9/132, α = 1 − 264/648 = 16/27
    assert name["alpha"] == pytest.approx(16 / 27)
    assert (city["strict_f1"], city["relaxed_f1"], city["kappa"], city["alpha"]) == (1.0, 1.0, 1.0, 1.0)


def test_three_annotators_mean_pairwise_kappa_and_alpha():
    figures = agreement([RecordSubmissions(TEXT, {"a": A, "b": B, "c": C})])
    overall = figures["overall"]
    # pairs (a,b): 2 of 4 strict, 4 of 4 relaxed; (a,c): 2 of 3, 2 of 3; (b,c): 0 of 3, 2 of 3
    assert overall["strict_f1"] == pytest.approx(4 / 10)
    assert overall["relaxed_f1"] == pytest.approx(8 / 10)
    # κ(a,b) = 15/21; κ(a,c): p_o 5/6, p_e 16/36 → 14/20; κ(b,c): p_o 4/6, p_e 18/36 → 1/3; six tokens each
    assert overall["kappa"] == pytest.approx((15 / 21 + 14 / 20 + 1 / 3) / 3)
    # three values a unit, each ordered pair weighs 1/2: o_NN 4, o_NO = o_ON 1, o_OO 9, o_CC 1, o_CO = o_OC 1;
    # n_N 5, n_O 11, n_C 2, n 18; D_o = 4/18, D_e = 2·(55 + 10 + 22)/306, α = 1 − 1224/3132 = 53/87
    assert overall["alpha"] == pytest.approx(53 / 87)


def test_an_annotator_missing_from_a_record_counts_as_missing_and_empty_records_agree():
    empty = RecordSubmissions("Sin datos.", {"a": [], "c": []})
    figures = agreement([RecordSubmissions(TEXT, {"a": A, "b": B}), empty])
    assert figures["records"] == 2 and figures["annotators"] == ["a", "b", "c"] and figures["unanimous"] == 1
    # the empty record adds 3 units of (O, O): o_OO = 12, n_O 13, n_C 2, n_N 3, n 18;
    # D_o = 2/18, D_e = 2·(26 + 39 + 6)/306, α = 1 − 612/2556 = 54/71
    assert figures["overall"]["alpha"] == pytest.approx(54 / 71)
    # κ of (a,c) is undefined (both all O): the mean is (a,b)'s alone
    assert figures["overall"]["kappa"] == pytest.approx(15 / 21)
    alone = agreement([empty])["overall"]
    assert alone == {"strict_f1": None, "relaxed_f1": None, "kappa": None, "alpha": None, "spans": 0}


def test_records_with_fewer_than_two_annotators_are_left_out_and_labels_can_be_named():
    figures = agreement([RecordSubmissions(TEXT, {"a": A})], labels=["NAME", "DATE"])
    assert figures["records"] == 0 and figures["overall"]["strict_f1"] is None
    assert set(figures["per_label"]) == {"NAME", "DATE"}
    assert figures["per_label"]["DATE"] == {"strict_f1": None, "relaxed_f1": None, "kappa": None, "alpha": None,
                                             "spans": 0}


def test_span_matches_count_both_sides_and_overlap_needs_the_same_label():
    assert span_matches(A, B) == (2, 4)
    assert span_matches([Span(0, 8, "NAME")], [Span(4, 8, "CITY")]) == (0, 0)
    # one long span against two short ones: all three matched, relaxed
    assert span_matches([Span(0, 23, "X")], [Span(0, 3, "X"), Span(17, 23, "X")]) == (0, 3)
    assert span_matches([Span(0, 3, "X")], [Span(3, 8, "X")]) == (0, 0)  # touching is not overlapping


@pytest.mark.parametrize("seed", range(5))
def test_kappa_and_alpha_equal_scikit_learns_and_the_krippendorff_packages(seed):
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    from learning.core.agreement import cohen_kappa, nominal_alpha

    rng = np.random.default_rng(seed)
    first = rng.integers(0, 4, size=300)
    second = np.where(rng.random(300) < 0.7, first, rng.integers(0, 4, size=300))
    assert cohen_kappa(first, second) == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
    matrix = rng.integers(0, 5, size=(4, 200)).astype(float)
    matrix[:, :150] = matrix[0, :150]  # mostly agreeing
    matrix[rng.random(matrix.shape) < 0.25] = np.nan  # some annotators did not mark some units
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert nominal_alpha(matrix) == pytest.approx(expected, abs=1e-12)


def test_per_record_and_per_group_figures_are_those_of_their_records_alone():
    records = [RecordSubmissions(TEXT, {"a": A, "b": B}), RecordSubmissions(TEXT, {"a": A, "b": A}),
               RecordSubmissions(TEXT, {"a": A}), RecordSubmissions(TEXT, {"b": B, "c": C})]
    figures = agreement(records, labels=[], groups=["mon", "mon", "tue", "tue"])
    assert figures["records"] == 3 and [r["unanimous"] for r in figures["per_record"]] == [False, True, False]
    for kept, row in zip((records[0], records[1], records[3]), figures["per_record"]):
        assert row == {**agreement([kept], labels=[])["overall"], "unanimous": row["unanimous"]}
    assert figures["per_group"]["mon"] == {**agreement(records[:2], labels=[])["overall"], "records": 2}
    assert figures["per_group"]["tue"]["records"] == 1  # the record with one annotator is not counted
