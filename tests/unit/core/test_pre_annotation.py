"""What the annotator is shown: spans with confidences, possible misses, and the recall-biased variant."""
from __future__ import annotations

import numpy as np

from learning.core.pre_annotation import pre_annotations
from corpus.text import tokenize

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
