"""What the annotator is shown: spans with confidences, possible misses, and the recall-biased variant."""
from __future__ import annotations

import numpy as np
import pytest

from corpus.bio import bio_to_spans
from corpus.span_json import write_span
from corpus.text import tokenize
from corpus.types import Span
from learning.core.decoding import decode
from learning.core.pre_annotation import MISSED_PHI_THRESHOLD, label_runs, pre_annotations, pre_annotations_many

LABELS = ["O", "B-NAME", "I-NAME", "B-DATE", "I-DATE"]


def _marginals(rows):
    return np.array(rows, dtype=np.float64)


def test_spans_confidences_and_possible_misses():
    text = "Paciente Juan Pérez visto hoy"
    tokens = tokenize(text)
    m = _marginals([
        [0.99, 0.01, 0, 0, 0],   # Paciente
        [0.05, 0.90, 0.05, 0, 0],  # Juan
        [0.10, 0.0, 0.80, 0.1, 0],  # Pérez
        [0.70, 0.0, 0.0, 0.30, 0],  # visto: O, but P(PHI) 0.3
        [0.95, 0.0, 0.0, 0.05, 0],  # hoy
    ])
    shown = pre_annotations(tokens, m, LABELS)
    assert shown["spans"] == [{"start": 9, "end": 19, "label": "NAME", "confidence": 0.8}]
    assert shown["possible_missed"] == [[20, 25, 0.3]]


def test_the_recall_bias_shows_unsure_phi_as_pale_suggestions():
    text = "visto hoy"
    tokens = tokenize(text)
    m = _marginals([[0.70, 0.0, 0.0, 0.30, 0], [0.95, 0.0, 0.0, 0.05, 0]])
    assert pre_annotations(tokens, m, LABELS)["spans"] == []
    biased = pre_annotations(tokens, m, LABELS, recall_bias=(0.9, 0.2))
    # "visto" (P(O) 0.70 < 0.9, P(B-DATE) 0.30 >= 0.2) becomes a DATE suggestion as sure as the model is.
    assert biased["spans"] == [{"start": 0, "end": 5, "label": "DATE", "confidence": 0.3}]
    assert biased["possible_missed"] == []  # what is suggested is no longer a possible miss


def test_an_empty_record():
    assert pre_annotations([], np.zeros((0, 5)), LABELS) == {"spans": [], "possible_missed": []}


def test_label_runs_read_tags_as_bio_to_spans_does():
    labels = ["O", "B-NAME", "I-NAME", "B-DATE", "I-DATE", "I-ID"]  # I-ID has no B-ID
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 25))
        indices = rng.integers(0, len(labels), size=n)  # valid BIO or not
        tokens = tokenize(" ".join(["w"] * n))
        first, last, kinds = label_runs(indices, labels)
        read = [Span(tokens[a].start, tokens[b].end, kind) for a, b, kind in zip(first.tolist(), last.tolist(), kinds)]
        assert read == bio_to_spans(tokens, [labels[i] for i in indices.tolist()])
    with pytest.raises(ValueError, match="not a BIO tag"):
        label_runs(np.array([0, 1]), ["O", "NAME"])


def _token_by_token(tokens, m, labels, recall_bias):
    """pre_annotations as first written: the tags read back token by token, each span's tokens looked up."""
    chosen = decode(m, labels, recall_bias)
    shown = m[np.arange(len(tokens)), chosen]
    starts = np.array([token.start for token in tokens])
    spans = []
    for span in bio_to_spans(tokens, [labels[i] for i in chosen.tolist()]):
        first = int(np.searchsorted(starts, span.start))
        last = int(np.searchsorted(starts, span.end, side="left"))
        spans.append(write_span(span, confidence=round(float(shown[first:max(last, first + 1)].min()), 4)))
    p_phi = 1.0 - m[:, 0]
    unsure = np.flatnonzero((chosen == 0) & (p_phi >= MISSED_PHI_THRESHOLD))
    return {"spans": spans, "possible_missed": [[tokens[i].start, tokens[i].end, round(float(p_phi[i]), 4)]
                                                 for i in unsure.tolist()]}


def test_the_same_as_reading_token_by_token():
    words = ["Juan", "Pérez", "vive", "en", "Las", "Palmas", ",", "03/04/2011", "."]
    rng = np.random.default_rng(1)
    for seed in range(300):
        n = int(rng.integers(1, 30))
        tokens = tokenize(" ".join(rng.choice(words, size=n)))
        m = rng.dirichlet(np.full(len(LABELS), rng.choice([0.1, 0.5, 1.0])), size=len(tokens))
        bias = None if seed % 3 == 0 else (float(rng.choice([0.6, 0.9, 0.999])), float(rng.choice([0.01, 0.2])))
        assert pre_annotations(tokens, m, LABELS, recall_bias=bias) == _token_by_token(tokens, m, LABELS, bias), seed


def test_records_decoded_together_are_shown_as_one_by_one():
    words = ["Ana", "Gil", "vive", "en", "Las", "Palmas", ",", "03/04/2011", "."]
    rng = np.random.default_rng(2)
    for seed in range(100):
        tokens, marginals = [], []
        for _ in range(int(rng.integers(1, 8))):
            n = int(rng.integers(0, 40))
            tokens.append(tokenize(" ".join(rng.choice(words, size=n))) if n else [])
            marginals.append(rng.dirichlet(np.full(len(LABELS), rng.choice([0.1, 0.5])), size=len(tokens[-1])))
        bias = None if seed % 3 == 0 else (0.9, 0.05)
        together = pre_annotations_many(tokens, marginals, LABELS, recall_bias=bias)
        assert together == [pre_annotations(t, m, LABELS, recall_bias=bias) for t, m in zip(tokens, marginals)]
        assert together == [_token_by_token(t, m, LABELS, bias) if t else {"spans": [], "possible_missed": []}
                            for t, m in zip(tokens, marginals)], seed
