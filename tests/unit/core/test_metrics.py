import numpy as np
import pytest

from learning.core.metrics import entity_level, evaluate, f_beta, leakage_by_type, mcnemar_tokens, prf
from corpus.text import tokenize
from corpus.types import Document, Span

TEXT = "Eva Lund vive en Madrid desde 03/03/1946."
GOLD = Document(TEXT, (Span(0, 8, "NAME"), Span(17, 23, "LOC"), Span(30, 40, "DATE")))
PRED = [
    Span(0, 3, "NAME"),  # only the first name: wrong boundary
    Span(17, 23, "LOC"),  # exact
    Span(24, 29, "LOC"),  # spurious "desde"
    Span(30, 40, "NAME"),  # right place, wrong type
]
EMPTY = Document("Sin datos.")


def test_tokens_of_the_example():
    assert [t.text for t in tokenize(TEXT)] == ["Eva", "Lund", "vive", "en", "Madrid", "desde", "03/03/1946", "."]


def test_evaluate_hand_worked():
    result = evaluate([GOLD, EMPTY], [PRED, []])
    # Entity, typed: 1 exact of 4 predicted and 3 gold.
    assert result["entity"]["p"] == pytest.approx(1 / 4)
    assert result["entity"]["r"] == pytest.approx(1 / 3)
    assert result["entity"]["f1"] == pytest.approx(2 / 7)
    # Entity, binary: LOC and the date span match by position.
    assert result["entity_binary"]["p"] == pytest.approx(2 / 4)
    assert result["entity_binary"]["r"] == pytest.approx(2 / 3)
    assert result["entity_binary"]["f1"] == pytest.approx(4 / 7)
    # Tokens: gold PHI Eva Lund Madrid date; predicted Eva Madrid desde date.
    assert result["token"] == pytest.approx({"p": 0.75, "r": 0.75, "f1": 0.75})
    assert result["token_type"] == pytest.approx({"p": 0.5, "r": 0.5, "f1": 0.5})
    assert result["leakage"] == pytest.approx(0.25)  # "Lund"
    assert result["eval_tokens"] == 8 + 3
    assert result["per_type"] == {
        "DATE": {"p": 0.0, "r": 0.0, "f1": 0.0, "support": 1},
        "LOC": pytest.approx({"p": 0.5, "r": 1.0, "f1": 2 / 3, "support": 1}),
        "NAME": {"p": 0.0, "r": 0.0, "f1": 0.0, "support": 1},
    }
    assert result["counts"]["tp"] == 1 and result["counts"]["pred"] == 4 and result["counts"]["gold"] == 3


def test_leakage_by_type_hand_worked():
    # Gold NAME "Eva Lund": "Lund" leaked; LOC "Madrid" found; the DATE predicted as NAME is not leaked.
    assert leakage_by_type([GOLD, EMPTY], [PRED, []]) == {
        "DATE": {"gold": 1, "leaked": 0, "leakage": 0.0},
        "LOC": {"gold": 1, "leaked": 0, "leakage": 0.0},
        "NAME": {"gold": 2, "leaked": 1, "leakage": 0.5},
    }
    assert leakage_by_type([GOLD], [[]])["NAME"]["leakage"] == 1.0
    # The evaluation a model version keeps counts them too (the model's page shows them per type).
    assert evaluate([GOLD, EMPTY], [PRED, []])["leaked_by_type"] == {
        "DATE": {"gold": 1, "leaked": 0}, "LOC": {"gold": 1, "leaked": 0}, "NAME": {"gold": 2, "leaked": 1}}
    assert evaluate([EMPTY], [[]])["leaked_by_type"] == {}


def test_perfect_and_empty_predictions():
    perfect = evaluate([GOLD], [list(GOLD.spans)])
    assert perfect["entity"]["f1"] == 1.0 and perfect["token"]["f1"] == 1.0 and perfect["leakage"] == 0.0
    nothing = evaluate([GOLD], [[]])
    assert nothing["entity"] == {"p": 0.0, "r": 0.0, "f1": 0.0}
    assert nothing["leakage"] == 1.0
    no_phi = evaluate([EMPTY], [[]])
    assert no_phi["entity"]["f1"] == 0.0 and no_phi["leakage"] == 0.0 and no_phi["per_type"] == {}


def test_misaligned_gold_span_is_judged_on_characters():
    # Gold ends inside a token: the token view counts the token, the entity view needs the exact characters.
    gold = Document("Madrid28036", (Span(0, 6, "LOC"),))
    assert len(tokenize(gold.text)) == 1
    result = evaluate([gold], [[Span(0, 11, "LOC")]])
    assert result["entity"]["f1"] == 0.0
    assert result["token"]["f1"] == 1.0


def test_length_mismatch_raises():
    with pytest.raises(ValueError, match="2 gold documents but 1"):
        evaluate([GOLD, EMPTY], [PRED])


def test_f_beta_and_prf():
    assert f_beta(0.5, 1.0, 1) == pytest.approx(2 / 3)
    assert f_beta(0.5, 1.0, 2) == pytest.approx(2.5 / 3)
    assert f_beta(0.0, 0.0, 4) == 0.0
    assert f_beta(1.0, 0.5, 40) == pytest.approx(1601 * 0.5 / (1600 + 0.5))
    assert prf(3, 4, 6) == pytest.approx({"p": 0.75, "r": 0.5, "f1": 0.6})


def test_mcnemar_with_yates_correction():
    n = 27
    text = " ".join(["w"] * n)
    toks = tokenize(text)
    gold = Document(text, tuple(Span(t.start, t.end, "X") for t in toks))

    def spans(indices):
        return [Span(toks[i].start, toks[i].end, "X") for i in indices]

    a = spans(list(range(0, 13)))  # right on 0-12
    b = spans(list(range(0, 10)) + list(range(13, 22)))  # right on 0-9 and 13-21
    result = mcnemar_tokens([gold], [a], [b])
    assert (result["both"], result["a_only"], result["b_only"], result["neither"]) == (10, 3, 9, 5)
    assert result["statistic"] == pytest.approx((abs(3 - 9) - 1) ** 2 / 12)
    assert result["pvalue"] == pytest.approx(0.148915, abs=1e-6)
    same = mcnemar_tokens([gold], [a], [a])
    assert same["statistic"] == 0.0 and same["pvalue"] == 1.0


def test_mcnemar_agrees_with_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar

    n = 60
    toks = tokenize(" ".join(["w"] * n))
    gold = Document(" ".join(["w"] * n), tuple(Span(t.start, t.end, "X") for t in toks))
    rng = np.random.default_rng(3)
    for _ in range(40):
        right_a, right_b = rng.random(n) < rng.random(), rng.random(n) < rng.random()
        a = [Span(t.start, t.end, "X") for t, right in zip(toks, right_a) if right]
        b = [Span(t.start, t.end, "X") for t, right in zip(toks, right_b) if right]
        ours = mcnemar_tokens([gold], [a], [b])
        if ours["a_only"] + ours["b_only"] == 0:
            continue
        theirs = mcnemar([[ours["both"], ours["a_only"]], [ours["b_only"], ours["neither"]]], exact=False,
                         correction=True)
        assert ours["statistic"] == pytest.approx(theirs.statistic, rel=1e-12)
        assert ours["pvalue"] == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)


def test_entity_counts_agree_with_nervaluate_when_ends_are_inclusive():
    from nervaluate import Evaluator

    rng = np.random.default_rng(7)
    labels = ["NAME", "LOC", "DATE"]
    gold_docs, predicted = [], []
    for _ in range(40):
        # Non-overlapping spans on a 200-character text, some adjacent.
        cuts = np.sort(rng.choice(np.arange(1, 200), size=12, replace=False))
        pieces = list(zip(cuts[0::2], cuts[1::2]))
        gold = [Span(int(s), int(e), str(rng.choice(labels))) for s, e in pieces if rng.random() < 0.8]
        pred = []
        for s, e in pieces:
            roll = rng.random()
            if roll < 0.5:
                pred.append(Span(int(s), int(e), str(rng.choice(labels))))
            elif roll < 0.7:
                pred.append(Span(int(s), int(e) - 1, str(rng.choice(labels))))
                pred.append(Span(int(e) - 1, int(e), str(rng.choice(labels))))
        gold_docs.append(Document("x" * 200, tuple(sorted(gold))))
        predicted.append(pred)

    def dicts(spans_per_doc):
        return [[{"label": s.label, "start": s.start, "end": s.end - 1} for s in spans] for spans in spans_per_doc]

    reference = Evaluator(
        dicts([d.spans for d in gold_docs]), dicts(predicted), tags=labels, loader="dict"
    ).evaluate()
    ours = entity_level(gold_docs, predicted)
    assert ours["counts"]["tp"] == reference["overall"]["strict"].correct
    assert ours["counts"]["tp_binary"] == reference["overall"]["exact"].correct
    assert ours["entity"]["f1"] == pytest.approx(reference["overall"]["strict"].f1)
    assert ours["entity_binary"]["f1"] == pytest.approx(reference["overall"]["exact"].f1)
    for label in labels:
        assert ours["per_type"][label]["f1"] == pytest.approx(reference["entities"][label]["strict"].f1)


def test_token_codes_give_the_types_spans_to_bio_gives_overlaps_and_misaligned_spans_included():
    from corpus.text import TokenOffsets

    from learning.core.metrics import token_codes, token_types

    rng = np.random.default_rng(5)
    text = " ".join(f"w{i}" for i in range(60))
    tokens = tokenize(text)
    offsets = TokenOffsets(text, [t.start for t in tokens], [t.end for t in tokens])
    for _ in range(200):
        spans = []
        for _ in range(int(rng.integers(0, 8))):
            start = int(rng.integers(0, len(text) - 1))
            spans.append(Span(start, int(rng.integers(start + 1, min(len(text), start + 25) + 1)),
                              ["A", "B", "C"][int(rng.integers(3))]))
        codes = {None: 0}
        assert token_codes(tokens, spans, codes).tolist() == [codes[kind] for kind in token_types(tokens, spans)]
        assert token_codes(offsets, spans, dict(codes)).tolist() == token_codes(tokens, spans, dict(codes)).tolist()
