from __future__ import annotations

import numpy as np
import pytest

from learning.core.taggers.base import NotFittedError, Tagger
from learning.core.taggers.unigram import UnigramTagger
from corpus.types import Document, Span

# "Ana" is a name twice and a plain word once; "Gil" is always I-NAME; "Madrid" a place once.
TRAIN = [
    Document("Ana Gil vino.", (Span(0, 7, "NAME"),)),
    Document("Ana Gil Ruiz.", (Span(0, 12, "NAME"),)),
    Document("ana vino de Madrid.", (Span(12, 18, "LOC"),)),
]


def test_labels_and_distributions():
    tagger = UnigramTagger().fit(TRAIN)
    assert isinstance(tagger, Tagger)
    assert tagger.labels_ == ["O", "B-LOC", "B-NAME", "I-NAME"]
    np.testing.assert_allclose(tagger.distributions_["ana"], [1 / 3, 0, 2 / 3, 0])
    np.testing.assert_allclose(tagger.distributions_["gil"], [0, 0, 0, 1])
    np.testing.assert_allclose(tagger.distributions_["."], [1, 0, 0, 0])


def test_predictions_most_frequent_label_unseen_is_o():
    tagger = UnigramTagger().fit(TRAIN)
    doc = Document("ANA Gil y Pepe en Madrid")
    [tags] = tagger.predict_tags([doc])
    assert tags == ["B-NAME", "I-NAME", "O", "O", "O", "B-LOC"]
    [spans] = tagger.predict([doc])
    assert spans == [Span(0, 7, "NAME"), Span(18, 24, "LOC")]
    [marg] = tagger.predict_marginals([doc])
    assert marg.shape == (6, 4)
    np.testing.assert_allclose(marg.sum(axis=1), 1.0)
    np.testing.assert_allclose(marg[3], [1, 0, 0, 0])  # "Pepe" unseen


def test_ties_go_to_o_and_empty_documents():
    tagger = UnigramTagger().fit([Document("x x", (Span(0, 1, "A"),))])
    assert tagger.predict_tags([Document("x")]) == [["O"]]
    assert tagger.labels_ == ["O", "B-A"]
    assert tagger.predict_marginals([Document("")])[0].shape == (0, 2)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        UnigramTagger().predict([Document("a")])
