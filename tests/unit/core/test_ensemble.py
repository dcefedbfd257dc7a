"""The ensemble tagger: its members' marginals averaged in one label order, decoded as one valid BIO
sequence."""
import numpy as np
import pytest

from corpus.text import tokenize
from learning.core.decoding import decoded_spans, is_bio_valid
from learning.core.taggers.base import clone
from learning.core.taggers.crf import CRFTagger
from learning.core.taggers.ensemble import EnsembleTagger, average_marginals, union_labels
from learning.core.taggers.unigram import UnigramTagger
from tests.unit.core.toy import NoteBuilder

NAMES = ["Ana", "Luis", "Marta", "Pedro", "Lucia", "Jorge"]
CITIES = ["Madrid", "Soria", "Lugo", "Cuenca"]


def notes(n: int, offset: int = 0):
    return [
        NoteBuilder().add("Paciente ").add(NAMES[(i + offset) % len(NAMES)], "NAME").add(" de ")
        .add(f"{CITIES[(i + offset) % len(CITIES)]} Norte", "LOC").add(" ingresa hoy .").build(f"n{i + offset}")
        for i in range(n)
    ]


def test_union_labels_keeps_the_taggers_order():
    assert union_labels([["O", "B-NAME", "I-NAME"], ["O", "B-LOC", "I-LOC", "B-NAME"]]) == [
        "O", "B-LOC", "I-LOC", "B-NAME", "I-NAME"]


def test_average_marginals_aligns_columns_and_weighs_members():
    labels = ["O", "B-LOC", "B-NAME"]
    first = [np.array([[0.8, 0.2], [0.4, 0.6]])]  # columns O, B-NAME
    second = [np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])]  # columns O, B-LOC, B-NAME
    (mean,) = average_marginals([first, second], [["O", "B-NAME"], ["O", "B-LOC", "B-NAME"]], labels, [3, 1])
    assert mean == pytest.approx(np.array([[0.725, 0.125, 0.15], [0.3, 0.0, 0.7]]))
    assert mean.sum(axis=1) == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("kwargs, message", [
    ({"weights": [1, -1]}, "the weights must be ≥ 0"),
    ({"weights": [0, 0]}, "positive sum"),
    ({"weights": [1]}, "2 members, 2 label lists and 1 weights"),
    ({"labels": ["O"]}, "are not among"),
    ({"second": [np.zeros((3, 2))]}, "document 0: the members gave [2, 3] token rows"),
    ({"second": []}, "different numbers of documents"),
])
def test_average_marginals_refuses_what_does_not_line_up(kwargs, message):
    first = [np.array([[0.9, 0.1], [0.2, 0.8]])]
    second = kwargs.get("second", [np.array([[0.5, 0.5], [0.5, 0.5]])])
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        average_marginals([first, second], [["O", "B-NAME"]] * 2, kwargs.get("labels", ["O", "B-NAME"]),
                          kwargs.get("weights", [1, 1]))


def test_the_ensemble_averages_its_fitted_members_and_decodes_a_valid_sequence():
    train, test = notes(12), notes(4, offset=2)
    ensemble = EnsembleTagger(members=("crf", "unigram"), weights=(0.7, 0.3),
                              member_params={"crf": {"max_iterations": 20, "gold_lexicon": False}}).fit(train)
    crf = CRFTagger(max_iterations=20, gold_lexicon=False).fit(train)
    unigram = UnigramTagger().fit(train)
    assert ensemble.labels_ == union_labels([crf.labels_, unigram.labels_])
    expected = average_marginals([crf.predict_marginals(test), unigram.predict_marginals(test)],
                                 [crf.labels_, unigram.labels_], ensemble.labels_, [0.7, 0.3])
    got = ensemble.predict_marginals(test)
    for a, b in zip(got, expected):
        assert a == pytest.approx(b)
    tokens = [tokenize(d.text) for d in test]
    assert ensemble.tokens(test) == tokens
    assert ensemble.predict(test) == [decoded_spans(t, m, ensemble.labels_) for t, m in zip(tokens, got)]
    assert all(is_bio_valid(np.array([ensemble.labels_.index(tag) for tag in tags]), ensemble.labels_)
               for tags in ensemble.predict_tags(test))
    assert {s.label for spans in ensemble.predict(test) for s in spans} == {"NAME", "LOC"}


def test_an_ensemble_is_cloned_unfitted_and_checks_its_weights():
    ensemble = EnsembleTagger(members=("unigram",), weights=(1.0,))
    fresh = clone(ensemble)
    assert fresh.get_params() == ensemble.get_params() and not hasattr(fresh, "members_")
    with pytest.raises(ValueError, match="1 members but 2 weights"):
        EnsembleTagger(members=("unigram",), weights=(0.5, 0.5)).fit(notes(3))
