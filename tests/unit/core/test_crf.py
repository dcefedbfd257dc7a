from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

from learning.core._compat.crfsuite import model_dump, model_file_bytes
from learning.core.features import FeatureCache
from learning.core.taggers.base import NotFittedError, Tagger, marginals_to_tags
from learning.core.taggers.crf import (
    CRFModelFormatError, CRFTagger, _chain_marginals, _chain_viterbi, _sentence_layout, read_crfsuite_weights,
)
from corpus.text import tokenize
from corpus.types import Document

from .meddocan import read_split
from .toy import NoteBuilder

FIRST = ["Ana", "Luis", "Marta", "Jorge", "Elena", "Pablo", "Lucía", "Sergio", "Irene", "Tomás"]
LAST = ["García", "Pérez", "Rivera", "Bueno", "Navarro", "Cuéllar", "Soto", "Gil", "Romero", "Vidal"]
FILLER = [
    "Paciente que acude por dolor abdominal.",
    "Se pauta tratamiento y control en consulta.",
    "No refiere alergias medicamentosas conocidas.",
]


def synthetic_docs(n: int, seed: int) -> list[Document]:
    rng = np.random.default_rng(seed)
    docs = []
    for k in range(n):
        note = NoteBuilder()
        note.add("Nombre: ").add(f"{rng.choice(FIRST)} {rng.choice(LAST)}", "NAME")
        note.add(".\nNHC: ").add(str(rng.integers(100000, 9999999)), "ID")
        note.add(".\nFecha de ingreso: ")
        note.add(f"{rng.integers(1, 29):02d}/{rng.integers(1, 13):02d}/{rng.integers(1990, 2020)}", "DATE")
        note.add(".\n" + " ".join(rng.choice(FILLER, size=2)) + "\n")
        docs.append(note.build(f"doc{k}"))
    return docs


@pytest.fixture(scope="module")
def fitted() -> CRFTagger:
    return CRFTagger(max_iterations=40, feature_cache=FeatureCache()).fit(synthetic_docs(30, seed=0))


def test_is_a_tagger_with_bio_labels(fitted):
    assert isinstance(fitted, Tagger)
    assert fitted.labels_ == ["O", "B-DATE", "B-ID", "B-NAME", "I-NAME"]
    assert fitted.state_weights_.shape == (len(fitted.attributes_), 5)
    assert fitted.transition_weights_.shape == (5, 5)


def test_predicts_held_out_synthetic_documents_exactly(fitted):
    test = synthetic_docs(5, seed=1)
    assert fitted.predict(test) == [sorted(d.spans) for d in test]


def test_fast_marginals_equal_crfsuite_marginals(fitted):
    docs = synthetic_docs(4, seed=2) + [Document("Nombre: Pepe.\nTexto sin datos.")]
    fast = fitted.predict_marginals(docs)
    reference = fitted.predict_marginals_reference(docs)
    for doc, f, r in zip(docs, fast, reference):
        assert f.shape == (len(tokenize(doc.text)), len(fitted.labels_))
        np.testing.assert_allclose(f.sum(axis=1), 1.0, atol=1e-12)
        assert np.max(np.abs(f - r)) < 1e-5
    # Viterbi and marginal argmax agree on these unambiguous documents.
    assert [marginals_to_tags(m, fitted.labels_) for m in fast[:4]] == fitted.predict_tags(docs[:4])


def test_marginals_from_float32_scores_equal_float64_ones(fitted):
    # Words never seen in training: attributes the model does not know, and a vocabulary grown since the
    # model's tables were built.
    docs = synthetic_docs(5, seed=5) + [Document("Nombre: Zacarías Ulloa.\nNHC: 88.\nVisto en Xàtiva.")]
    feats = fitted.features(docs)
    starts, lengths = _sentence_layout(feats)
    exact = _chain_marginals(fitted._unary(feats, np.float64), starts, lengths, fitted.transition_weights_)
    fast = np.concatenate(fitted.predict_marginals(docs))
    assert fast.dtype == np.float64
    assert np.abs(fast - exact).max() < 1e-4
    np.testing.assert_allclose(fast.sum(axis=1), 1.0, atol=1e-12)


def test_label_scores_sum_the_weights_of_the_known_attributes(fitted):
    docs = [Document("Nombre: Zacarías García.\nFecha de ingreso: 03/04/2011.")]
    [f] = fitted.features(docs)
    row = {a: i for i, a in enumerate(fitted.attributes_)}
    expected = np.array([
        sum((fitted.state_weights_[row[a]] for a in f.token_attributes(t) if a in row), np.zeros(5))
        for t in range(f.n_tokens)
    ])
    np.testing.assert_allclose(fitted._unary([f]), expected, atol=1e-12)
    np.testing.assert_allclose(fitted._unary([f], np.float32), expected, atol=1e-5)


def test_tokens_are_those_of_the_cached_features(fitted):
    docs = synthetic_docs(3, seed=6)
    assert fitted.tokens(docs) == [tokenize(d.text) for d in docs]
    assert all(tokens is f.tokens for tokens, f in zip(fitted.tokens(docs), fitted.features(docs)))


def test_model_weights_read_at_full_precision(fitted):
    n_labels, n_attrs, records = read_crfsuite_weights(model_file_bytes(fitted.crf_))
    assert (n_labels, n_attrs) == (5, len(fitted.attributes_))
    dump = model_dump(fitted.crf_).state_features
    index = {a: i for i, a in enumerate(fitted.attributes_)}
    for (attr, label), w in list(dump.items())[:200]:
        assert abs(fitted.state_weights_[index[attr], fitted.labels_.index(label)] - w) <= 5e-7
    with pytest.raises(CRFModelFormatError):
        read_crfsuite_weights(b"not a model file at all, not even close to one....")


def test_features_are_extracted_once_per_text():
    cache = FeatureCache()
    docs = synthetic_docs(6, seed=3)
    tagger = CRFTagger(max_iterations=5, feature_cache=cache).fit(docs)
    assert (cache.misses, cache.hits) == (6, 0)
    tagger.predict_marginals(docs)
    CRFTagger(max_iterations=5, c2=0.5, feature_cache=cache).fit(docs[:3])
    assert (cache.misses, cache.hits) == (6, 9)


def test_pickle_round_trip_keeps_predictions(fitted):
    docs = synthetic_docs(2, seed=4)
    clone = pickle.loads(pickle.dumps(fitted))
    for a, b in zip(fitted.predict_marginals(docs), clone.predict_marginals(docs)):
        np.testing.assert_array_equal(a, b)
    assert clone.predict(docs) == fitted.predict(docs)


def test_empty_documents_and_errors(fitted):
    [m] = fitted.predict_marginals([Document("")])
    assert m.shape == (0, 5)
    assert fitted.predict([Document(" \n ")]) == [[]]
    with pytest.raises(NotFittedError):
        CRFTagger().predict_marginals([Document("a")])
    with pytest.raises(ValueError):
        CRFTagger().fit([])


def test_meddocan_sample_marginals_match_crfsuite():
    train = read_split("train", 25)
    dev = read_split("dev", 5)
    if not train:
        pytest.skip("MEDDOCAN corpus not available")
    tagger = CRFTagger(max_iterations=30, feature_cache=FeatureCache()).fit(train)
    fast = tagger.predict_marginals(dev)
    reference = tagger.predict_marginals_reference(dev)
    assert max(float(np.max(np.abs(f - r))) for f, r in zip(fast, reference)) < 1e-5
    feats = tagger.features(dev)
    starts, lengths = _sentence_layout(feats)
    exact = _chain_marginals(tagger._unary(feats, np.float64), starts, lengths, tagger.transition_weights_)
    assert np.abs(np.concatenate(fast) - exact).max() < 1e-4  # float32 scores, float64's marginals


def test_batched_viterbi_is_the_best_path_of_every_chain_with_ties_to_the_lowest_label():
    rng = np.random.default_rng(3)
    n_labels = 3
    lengths = np.array([0, 1, 4, 2, 5, 3, 1, 4] * 3)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    # Scores on a coarse grid, so that equal paths are common.
    unary = rng.integers(-2, 3, size=(int(lengths.sum()), n_labels)).astype(float)
    transition = rng.integers(-2, 3, size=(n_labels, n_labels)).astype(float)

    best = _chain_viterbi(unary, starts, lengths, transition, max_bucket_tokens=8)

    for start, length in zip(starts.tolist(), lengths.tolist()):
        if length == 0:
            continue
        chain = unary[start : start + length]

        def score(path):
            return chain[np.arange(length), path].sum() + sum(transition[a, b] for a, b in zip(path, path[1:]))

        paths = list(itertools.product(range(n_labels), repeat=length))
        top = max(score(p) for p in paths)
        chosen = tuple(best[start : start + length].tolist())
        assert score(chosen) == top
        # The backtracking keeps the lowest label at every tie, from the last token back.
        ties = [p for p in paths if score(p) == top]
        assert chosen == min(ties, key=lambda p: p[::-1])
