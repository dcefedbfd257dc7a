"""What every tagger offers, and the conversions between marginals, tags and spans they share.

A tagger is a scikit-learn style estimator over :class:`~learning.core.types.Document` objects:

* ``fit(docs) -> self`` learns from the documents' gold spans;
* ``predict_marginals(docs) -> list[np.ndarray]``: per document an array (n_tokens, n_labels) whose rows
  sum to 1, tokens being ``tokenize(doc.text)`` and columns following ``labels_`` ('O' included);
* ``predict_tags(docs) -> list[list[str]]`` and ``predict(docs) -> list[list[Span]]``.

Everything downstream (query strategies, self-training, recall bias, metrics) works from those arrays.
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from learning.core.bio import OUTSIDE, bio_labels, bio_to_spans, label_of, spans_to_bio
from learning.core.text import Token, tokenize
from learning.core.types import Document, Span

__all__ = [
    "Tagger",
    "NotFittedError",
    "marginals_to_tags",
    "marginals_to_spans",
    "gold_tags",
    "labels_from_tags",
]


class NotFittedError(RuntimeError):
    """A prediction was asked of a tagger that has not been fitted."""


@runtime_checkable
class Tagger(Protocol):
    labels_: list[str]

    def fit(self, docs: Sequence[Document]) -> "Tagger": ...

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]: ...

    def predict_tags(self, docs: Sequence[Document]) -> list[list[str]]: ...

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]: ...


def marginals_to_tags(marginals: np.ndarray, labels: Sequence[str]) -> list[str]:
    """The most probable label of every token (ties go to the label listed first)."""
    if marginals.shape[0] == 0:
        return []
    best = np.argmax(marginals, axis=1)
    return [labels[i] for i in best.tolist()]


def marginals_to_spans(tokens: Sequence[Token], marginals: np.ndarray, labels: Sequence[str]) -> list[Span]:
    """Spans read from the per-token most probable labels."""
    return bio_to_spans(tokens, marginals_to_tags(marginals, labels))


def gold_tags(doc: Document, tokens: Sequence[Token] | None = None) -> list[str]:
    """BIO tags of a document's gold spans over its tokens (misaligned spans claim whole tokens)."""
    tokens = tokenize(doc.text) if tokens is None else tokens
    return spans_to_bio(tokens, doc.spans)[0]


def labels_from_tags(tag_sequences: Sequence[Sequence[str]]) -> list[str]:
    """The label order taggers use: 'O', then B-/I- per type in sorted type order, only labels seen."""
    seen = {t for seq in tag_sequences for t in seq}
    types = sorted({label_of(t) for t in seen if t != OUTSIDE})
    return [lab for lab in bio_labels(types) if lab == OUTSIDE or lab in seen]
