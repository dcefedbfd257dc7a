import math

import numpy as np
import pytest

from learning.core.self_training import choose_thresholds, cut_sentences, select_confident, self_train
from learning.core.taggers.unigram import UnigramTagger
from corpus.text import tokenize
from corpus.types import Document, Span


def doc(text, *marked, name=""):
    """A document whose spans are the given (substring, label) pairs, found left to right."""
    spans, at = [], 0
    for piece, label in marked:
        start = text.index(piece, at)
        spans.append(Span(start, start + len(piece), label))
        at = start + len(piece)
    return Document(text, tuple(spans), name)


LABELLED = [
    doc("Juan vive en Madrid.", ("Juan", "NAME"), ("Madrid", "LOC")),
    doc("Ana vive en Lugo.", ("Ana", "NAME"), ("Lugo", "LOC")),
    doc("Visitó Sevilla en coche."),  # "Sevilla" once not PHI ...
    doc("Nació en Sevilla.", ("Sevilla", "LOC")),  # ... and once PHI: P(O) = P(B-LOC) = 0.5
]
UNLABELLED = [
    Document("Juan vive en Lugo.\nAna vive en Sevilla.", name="u1"),
    Document("Ana vive en Madrid.", name="u2"),
]
DEV = [doc("Ana vive en Lugo.", ("Ana", "NAME"), ("Lugo", "LOC"))]


def test_cut_sentences_keeps_offsets_and_source():
    sentences = cut_sentences(UNLABELLED)
    assert [s.text for s in sentences] == ["Juan vive en Lugo.", "Ana vive en Sevilla.", "Ana vive en Madrid."]
    second = sentences[1]
    assert second.meta == {"silver": True, "source": "u1", "offset": 19}
    assert UNLABELLED[0].text[19 : 19 + len(second.text)] == second.text


def test_fixed_thresholds_select_only_confident_sentences_then_stop():
    result = self_train(LABELLED, UNLABELLED, DEV, tagger_factory=UnigramTagger, thresholds=(0.9, 0.9))
    # The Sevilla sentence has an O at 0.5: never selected, so the second round selects nothing.
    assert result.stopped == "nothing-selected"
    assert [h["selected"] for h in result.history] == [0, 2, 0]
    assert [h["pool"] for h in result.history] == [3, 1, 1]
    # Dev F1 is already 1.0 with gold only and never rises above it, so the baseline model is kept.
    assert [h["dev_f1"] for h in result.history] == [1.0, 1.0, 1.0]
    assert result.best_iteration == 0 and result.silver == []


def test_silver_sentences_carry_machine_labels_relative_to_the_sentence():
    result = self_train(LABELLED, UNLABELLED, [], tagger_factory=UnigramTagger, thresholds=(0.9, 0.9))
    by_text = {s.text: s for s in result.silver}
    assert set(by_text) == {"Juan vive en Lugo.", "Ana vive en Madrid."}
    first = by_text["Juan vive en Lugo."]
    assert first.spans == (Span(0, 4, "NAME"), Span(13, 17, "LOC"))
    assert first.meta == {"silver": True, "source": "u1", "offset": 0}
    assert by_text["Ana vive en Madrid."].meta["source"] == "u2"
    # The gold list was not touched and the returned model learned from gold + silver.
    assert result.tagger.distributions_["lugo"][result.tagger.labels_.index("B-LOC")] == 1.0


def test_no_selection_adds_everything_at_once():
    result = self_train(LABELLED, UNLABELLED, [], tagger_factory=UnigramTagger, selection=False)
    assert result.stopped == "no-selection"
    assert len(result.silver) == 3
    sevilla = next(s for s in result.silver if "Sevilla" in s.text)
    assert sevilla.spans == (Span(0, 3, "NAME"),)  # the tie goes to O: Sevilla is not marked


def test_choose_thresholds_hand_worked():
    labels = ["O", "B-X"]
    sentences = [
        (np.array([[0.05, 0.95], [0.99, 0.01]]), ["B-X", "O"]),  # PHI at 0.95, right
        (np.array([[0.40, 0.60], [0.99, 0.01]]), ["O", "O"]),  # PHI at 0.6, wrong: costs precision
        (np.array([[0.70, 0.30], [0.99, 0.01]]), ["B-X", "O"]),  # O at 0.7, a missed PHI: costs recall
        (np.array([[0.999, 0.001]] * 3), ["O", "O", "O"]),  # sure and right
    ]
    marginals = [m for m, _ in sentences]
    gold = [g for _, g in sentences]
    # θ_PHI must exceed 0.6 (else P = 1/2) and θ_O must exceed 0.7 (else R = 1/2). Every such pair up to
    # (0.95, 0.99) selects sentences 1 and 4 (5 tokens); above 0.99 for O only sentence 4 remains.
    # Equal coverage goes to the stricter pair.
    assert choose_thresholds(marginals, gold, labels) == (0.95, 0.99)
    # Lenient targets accept all 4 sentences (P = R = 1/2); the strictest pair keeping them is (0.6, 0.7).
    assert choose_thresholds(marginals, gold, labels, target_precision=0.5, target_recall=0.5) == (0.6, 0.7)
    # Only bad sentences: no pair can vouch for its selection.
    assert choose_thresholds(marginals[1:3], gold[1:3], labels) == (math.inf, math.inf)


def test_select_confident_per_kind():
    o_index = 0
    sentences = [
        np.array([[0.98, 0.02], [0.2, 0.8]]),  # O at 0.98, PHI at 0.8
        np.array([[0.98, 0.02], [0.05, 0.95]]),  # O at 0.98, PHI at 0.95
        np.array([[0.9, 0.1]]),  # O at 0.9
        np.zeros((0, 2)),
    ]
    assert select_confident(sentences, o_index, 0.9, 0.95).tolist() == [1]
    assert select_confident(sentences, o_index, 0.8, 0.9).tolist() == [0, 1, 2]
    assert select_confident(sentences, o_index, math.inf, 0.9).tolist() == [2]


class ShrinkingTagger:
    """A stand-in whose dev predictions get worse and whose confidence grows with each retrain.

    Trained on n documents it is sure of pool sentences "s0".."s{n-1}" and marks the first 5 - n dev tokens.
    """

    labels_ = ["O", "B-X"]

    def fit(self, docs):
        self.n_ = len(docs)
        return self

    def predict_marginals(self, docs):
        out = []
        for d in docs:
            sure = d.text.startswith("s") and int(d.text[1]) < self.n_
            row = [1.0, 0.0] if sure else [0.5, 0.5]
            out.append(np.array([row] * len(tokenize(d.text))))
        return out

    def predict(self, docs):
        keep = max(0, 5 - self.n_)
        return [[Span(t.start, t.end, "X") for t in tokenize(d.text)[:keep]] for d in docs]


def test_stops_after_three_dev_f1_drops_and_keeps_the_best_model():
    pool = [Document("s0 .\ns1 .\ns2 .\ns3 .\ns4 .", name="p")]
    dev = [doc("a b c d", ("a", "X"), ("b", "X"), ("c", "X"), ("d", "X"))]
    gold = [doc("g", ("g", "X"))]
    seen = []
    result = self_train(gold, pool, dev, tagger_factory=ShrinkingTagger, thresholds=(0.9, 0.9), progress=seen.append)
    assert result.stopped == "dev-f1-dropped"
    f1 = [h["dev_f1"] for h in result.history]
    assert f1 == pytest.approx([1.0, 6 / 7, 2 / 3, 0.4])
    assert [h["selected"] for h in result.history] == [0, 1, 1, 1]
    assert result.history[-1]["pool"] == 2
    assert result.best_iteration == 0 and result.silver == [] and result.tagger.n_ == 1
    assert seen == result.history


def test_needs_a_dev_set_to_choose_thresholds():
    with pytest.raises(ValueError, match="development set"):
        self_train(LABELLED, UNLABELLED, [], tagger_factory=UnigramTagger)


def test_with_the_crf_on_a_tiny_corpus():
    from functools import partial

    from learning.core.taggers.crf import CRFTagger

    first = ["Juan", "Ana", "Luis", "Eva", "Rosa", "Pablo", "Marta", "Jorge", "Irene", "Tomás"]
    cities = ["Madrid", "Lugo", "Soria", "Cádiz", "Vigo", "Ávila"]

    def note(i):
        name, city = first[i % len(first)], cities[i % len(cities)]
        return doc(f"Paciente: {name}.\nReside en {city}.\nAcude por dolor.", (name, "NAME"), (city, "LOC"))

    gold = [note(i) for i in range(6)]
    dev = [note(i) for i in range(6, 9)]
    unlabelled = [Document(note(i).text, (), f"u{i}") for i in range(9, 14)]
    result = self_train(gold, unlabelled, dev, tagger_factory=partial(CRFTagger, max_iterations=30))
    assert result.stopped in ("pool-empty", "nothing-selected", "dev-f1-dropped")
    pools = [h["pool"] for h in result.history]
    assert pools[0] == 15 and pools == sorted(pools, reverse=True)
    assert sum(h["selected"] for h in result.history) == 15 - pools[-1]
    for sentence in result.silver:
        assert sentence.meta["silver"] is True and sentence.meta["source"].startswith("u")
        source = next(u for u in unlabelled if u.name == sentence.meta["source"])
        offset = sentence.meta["offset"]
        assert source.text[offset : offset + len(sentence.text)] == sentence.text
        assert all(s.label in ("NAME", "LOC") and 0 <= s.start < s.end <= len(sentence.text) for s in sentence.spans)
    assert result.history[result.best_iteration]["dev_f1"] == max(h["dev_f1"] for h in result.history)
    assert result.tagger.predict(dev)[0]
