"""The floor every model must beat: the most frequent label of each token form (ALGORITHMS.md §5)."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from corpus.bio import OUTSIDE
from learning.core.params import Param
from learning.core.taggers.base import BaseTagger, gold_tags, labels_from_tags
from corpus.text import tokenize
from corpus.types import Document

__all__ = ["UnigramTagger"]


class UnigramTagger(BaseTagger):
    """Most frequent BIO label per lower-cased token form in the training documents; unseen forms are O.

    ``predict_marginals`` gives, per token, the relative frequencies of the labels its form had in
    training (a one-hot 'O' row for unseen forms), so the argmax is the most frequent label; ties go to
    the label listed first in ``labels_`` ('O' first).
    """

    PARAMETERS = (
        Param("lowercase", bool, True, "count \"Madrid\" and \"MADRID\" as one form"),
    )

    def __init__(self, lowercase: bool = True) -> None:
        self.lowercase = lowercase

    def _form(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def fit(self, docs: Sequence[Document]) -> "UnigramTagger":
        counts: dict[str, Counter] = defaultdict(Counter)
        all_tags = []
        for doc in docs:
            tokens = tokenize(doc.text)
            tags = gold_tags(doc, tokens)
            all_tags.append(tags)
            for tok, tag in zip(tokens, tags):
                counts[self._form(tok.text)][tag] += 1
        self.labels_ = labels_from_tags(all_tags + [[OUTSIDE]])
        index = {lab: i for i, lab in enumerate(self.labels_)}
        self.distributions_: dict[str, np.ndarray] = {}
        for form, counter in counts.items():
            row = np.zeros(len(self.labels_))
            for tag, c in counter.items():
                row[index[tag]] = c
            self.distributions_[form] = row / row.sum()
        return self

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        self._check_fitted()
        unseen = np.zeros(len(self.labels_))
        unseen[0] = 1.0
        out = []
        for doc in docs:
            rows = [self.distributions_.get(self._form(t.text), unseen) for t in tokenize(doc.text)]
            out.append(np.array(rows) if rows else np.zeros((0, len(self.labels_))))
        return out
