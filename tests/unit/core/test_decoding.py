"""BIO-consistent decoding of marginals: always valid, the token-wise labels wherever those are valid, one
entity where token-wise decoding cuts it, and the recall bias's decisions kept."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from corpus.bio import bio_to_spans
from corpus.text import tokenize
from corpus.types import Span
from learning.core.decoding import (
    allowed_transitions,
    decode,
    decode_tokenwise,
    decoded_spans,
    decoded_tags,
    is_bio_valid,
)
from learning.core.pre_annotation import pre_annotations
from learning.core.recall_bias import TAU_ALT_GRID, TAU_MAIN_GRID, apply_recall_bias, recall_biased_spans

LABELS = ["O", "B-TERRITORIO", "I-TERRITORIO", "B-CALLE", "I-CALLE"]
TEXT = "Vive en Las Palmas de Gran Canaria ."


def _random_marginals(rng: np.random.Generator, n_tokens: int, n_labels: int) -> np.ndarray:
    # A small Dirichlet concentration gives peaked rows with many I- labels in odd places.
    return rng.dirichlet(np.full(n_labels, rng.choice([0.1, 0.3, 1.0])), size=n_tokens)


def _random_bias(rng: np.random.Generator) -> tuple[float, float] | None:
    if rng.random() < 0.3:
        return None
    return float(rng.choice(TAU_MAIN_GRID)), float(rng.choice(TAU_ALT_GRID))


def _documented_scores(m: np.ndarray, labels, bias) -> np.ndarray:
    """The scores the module's docstring defines, written out naively, token by token."""
    scores = np.log(np.maximum(m, np.finfo(np.float64).tiny))
    if bias is None:
        return scores
    tau_main, tau_alt = bias
    for t, row in enumerate(m):
        phi = max(range(1, len(labels)), key=lambda j: (row[j], -j))
        argmax = int(np.argmax(row))
        relabelled = argmax == 0 and row[0] < tau_main and row[phi] >= tau_alt
        if argmax != 0 or relabelled:
            scores[t, 0] = -np.inf
        if relabelled and labels[phi].startswith("I-"):
            scores[t, labels.index("B-" + labels[phi][2:])] = scores[t, phi]
    return scores


def _best_valid_total(scores: np.ndarray, labels) -> float:
    """The highest total score over every valid sequence, by enumeration."""
    best = -np.inf
    for path in itertools.product(range(len(labels)), repeat=scores.shape[0]):
        if is_bio_valid(np.array(path), labels):
            best = max(best, float(scores[np.arange(len(path)), path].sum()))
    return best


def test_the_transitions_of_bio():
    allowed, opens = allowed_transitions(LABELS)
    assert opens.tolist() == [True, True, False, True, False]
    # I-TERRITORIO (column 2) only after B-TERRITORIO or I-TERRITORIO; I-CALLE (4) only after B-/I-CALLE.
    assert allowed[:, 2].tolist() == [False, True, True, False, False]
    assert allowed[:, 4].tolist() == [False, False, False, True, True]
    assert allowed[:, [0, 1, 3]].all()
    assert is_bio_valid(np.array([0, 1, 2, 1, 2, 3, 4, 0]), LABELS)
    assert not is_bio_valid(np.array([2]), LABELS)
    assert not is_bio_valid(np.array([1, 4]), LABELS)
    assert not is_bio_valid(np.array([0, 0, 2]), LABELS)


def test_always_valid_on_random_marginals():
    invalid_tokenwise = 0
    for seed in range(1000):
        rng = np.random.default_rng(seed)
        m = _random_marginals(rng, int(rng.integers(1, 40)), len(LABELS))
        bias = _random_bias(rng)
        chosen = decode(m, LABELS, bias)
        assert is_bio_valid(chosen, LABELS), (seed, chosen)
        invalid_tokenwise += not is_bio_valid(decode_tokenwise(m, LABELS, bias), LABELS)
    assert invalid_tokenwise > 500  # the marginals are adversarial: most token-wise decodings are invalid


def test_the_best_valid_sequence_under_the_documented_scores():
    for seed in range(300):
        rng = np.random.default_rng(seed)
        m = _random_marginals(rng, int(rng.integers(1, 6)), len(LABELS))
        bias = _random_bias(rng)
        scores = _documented_scores(m, LABELS, bias)
        chosen = decode(m, LABELS, bias)
        total = float(scores[np.arange(m.shape[0]), chosen].sum())
        assert total == pytest.approx(_best_valid_total(scores, LABELS), abs=1e-9), seed


def test_identical_to_token_wise_where_that_is_valid():
    compared = 0
    for seed in range(1000):
        rng = np.random.default_rng(seed)
        # Marginals peaked on a valid sequence, with noise that sometimes breaks it.
        n = int(rng.integers(1, 40))
        allowed, opens = allowed_transitions(LABELS)
        truth = [int(rng.choice(np.flatnonzero(opens)))]
        while len(truth) < n:
            truth.append(int(rng.choice(np.flatnonzero(allowed[truth[-1]]))))
        m = _random_marginals(rng, n, len(LABELS)) * 0.6
        m[np.arange(n), truth] += 0.4
        bias = _random_bias(rng)
        tokenwise = decode_tokenwise(m, LABELS, bias)
        if is_bio_valid(tokenwise, LABELS):
            compared += 1
            assert decode(m, LABELS, bias).tolist() == tokenwise.tolist(), seed
    assert compared > 300


def _las_palmas(inner: list[float]) -> np.ndarray:
    return np.array([
        [0.98, 0.01, 0.01, 0.00, 0.00],  # Vive
        [0.95, 0.03, 0.01, 0.01, 0.00],  # en
        [0.05, 0.90, 0.03, 0.02, 0.00],  # Las
        [0.04, 0.03, 0.90, 0.00, 0.03],  # Palmas
        inner,                            # de
        [0.10, 0.05, 0.80, 0.03, 0.02],  # Gran
        [0.06, 0.02, 0.90, 0.00, 0.02],  # Canaria
        [0.99, 0.00, 0.01, 0.00, 0.00],  # .
    ])


@pytest.mark.parametrize("inner", [
    [0.48, 0.04, 0.44, 0.02, 0.02],  # "de": O, with I-TERRITORIO a close second
    [0.06, 0.02, 0.44, 0.46, 0.02],  # "de": B-CALLE, with I-TERRITORIO a close second
])
def test_las_palmas_de_gran_canaria_is_one_span(inner):
    tokens = tokenize(TEXT)
    m = _las_palmas(inner)
    tokenwise = [LABELS[i] for i in decode_tokenwise(m, LABELS).tolist()]
    assert len(bio_to_spans(tokens, tokenwise)) in (2, 3)  # the entity cut into pieces
    assert decoded_tags(m, LABELS) == ["O", "O", "B-TERRITORIO"] + ["I-TERRITORIO"] * 4 + ["O"]
    assert decoded_spans(tokens, m, LABELS) == [Span(8, 34, "TERRITORIO")]
    shown = pre_annotations(tokens, m, LABELS)
    # As sure as its least sure token: "de" as I-TERRITORIO; and "de" is no longer a possible miss.
    assert shown == {"spans": [{"start": 8, "end": 34, "label": "TERRITORIO", "confidence": 0.44}],
                     "possible_missed": []}


def test_an_inner_token_more_likely_to_open_a_new_entity_still_does():
    # B-X I-X B-X I-X I-X is valid: the marginals cannot tell it from two adjacent places.
    m = _las_palmas([0.06, 0.46, 0.44, 0.02, 0.02])
    assert decode(m, LABELS).tolist() == decode_tokenwise(m, LABELS).tolist() == [0, 0, 1, 2, 1, 2, 2, 0]


def test_recall_bias_keeps_a_valid_token_wise_decoding():
    # Relabelled I-NAME after O becomes B-NAME, as token by token; the sequence is valid, so nothing changes.
    labels = ["O", "B-NAME", "I-NAME", "B-LOC", "I-LOC"]
    m = np.array([
        [0.99, 0.005, 0.003, 0.001, 0.001],
        [0.70, 0.05, 0.20, 0.03, 0.02],
        [0.60, 0.00, 0.35, 0.05, 0.00],
        [0.10, 0.80, 0.05, 0.05, 0.00],
        [0.80, 0.00, 0.00, 0.05, 0.15],
    ])
    assert decode(m, labels, (0.9, 0.1)).tolist() == apply_recall_bias(m, labels, 0.9, 0.1).tolist() == [0, 1, 2, 1, 3]


def test_recall_bias_relabels_an_inner_token_into_the_entity():
    tokens = tokenize(TEXT)
    m = _las_palmas([0.70, 0.03, 0.25, 0.01, 0.01])  # "de": P(O) 0.70, I-TERRITORIO 0.25
    # Unbiased, bridging "de" (log 0.25) costs less than opening "Gran" (log 0.05): one span already.
    assert decoded_spans(tokens, m, LABELS) == [Span(8, 34, "TERRITORIO")]
    # The thresholds relabel "de" to I-TERRITORIO, token by token already one valid span.
    assert recall_biased_spans(tokens, m, LABELS, 0.9, 0.2) == [Span(8, 34, "TERRITORIO")]
    # Too sure of O for τ_main 0.6: token by token two spans, the decoder one.
    tokenwise = [LABELS[i] for i in apply_recall_bias(m, LABELS, 0.6, 0.2).tolist()]
    assert len(bio_to_spans(tokens, tokenwise)) == 2
    assert recall_biased_spans(tokens, m, LABELS, 0.6, 0.2) == [Span(8, 34, "TERRITORIO")]


def test_recall_bias_never_drops_what_it_shows_as_phi():
    labels = ["O", "B-T", "I-T"]
    m = np.array([
        [0.97, 0.02, 0.01],  # O
        [0.75, 0.05, 0.20],  # relabelled: I-T, after O opened as B-T
        [0.60, 0.02, 0.38],  # relabelled: I-T
        [0.95, 0.01, 0.04],  # too sure of O to be relabelled
        [0.30, 0.05, 0.65],  # the argmax: I-T after O
        [0.90, 0.05, 0.05],  # O
    ])
    assert apply_recall_bias(m, labels, 0.9, 0.2).tolist() == [0, 1, 2, 0, 2, 0]  # not valid
    # Unbiased, the cheapest valid sequence drops the last I-T (log 0.30 for O against log 0.05 for B-T).
    assert decoded_tags(m, labels) == ["O", "O", "O", "O", "O", "O"]
    # With the bias, every token shown as PHI token by token stays PHI; the stray I-T opens its own span.
    assert decoded_tags(m, labels, (0.9, 0.2)) == ["O", "B-T", "I-T", "O", "B-T", "O"]
    for seed in range(300):
        rng = np.random.default_rng(seed)
        m = _random_marginals(rng, int(rng.integers(1, 40)), len(LABELS))
        bias = (float(rng.choice(TAU_MAIN_GRID)), float(rng.choice(TAU_ALT_GRID)))
        phi_tokenwise = apply_recall_bias(m, LABELS, *bias) != 0
        assert (decode(m, LABELS, bias)[phi_tokenwise] != 0).all(), seed


def test_an_empty_document_and_a_missing_outside_label():
    assert decode(np.zeros((0, 5)), LABELS).tolist() == []
    assert decode(np.zeros((0, 5)), LABELS, (0.9, 0.1)).tolist() == []
    with pytest.raises(ValueError, match="no 'O'"):
        decode(np.ones((1, 2)) / 2, ["B-X", "I-X"], (0.9, 0.1))
    with pytest.raises(ValueError, match="do not match"):
        decode(np.ones((1, 3)) / 3, LABELS)
