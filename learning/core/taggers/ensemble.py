"""An ensemble of taggers: their marginals averaged, decoded as one valid BIO sequence.

The members (by default the CRF and the BiLSTM-CRF) are fitted on the same documents; each token's
distribution over the labels is the weighted mean of theirs (a member that never saw a label gives it 0),
so everything downstream — the recall bias, the query strategies, the pre-annotations — reads the ensemble
as it reads one tagger. ``predict`` decodes the averaged marginals with ``learning.core.decoding.decode``
(the best valid BIO sequence), as the suggestions are decoded, rather than token by token: two members that
agree on an entity but split their doubt over its inner tokens differently must not cut it in pieces.

Averaging is the simplest combination that needs no held-out data; a stacked combiner would have to be fitted
on marginals of documents the members were not trained on (cross-fitting both members), which costs a second
BiLSTM-CRF fit for a gain not measured yet.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from corpus.bio import OUTSIDE, label_of
from corpus.text import Token
from corpus.types import Document, Span
from learning.core.decoding import decoded_spans
from learning.core.registry import make_tagger
from learning.core.taggers.base import BaseTagger

__all__ = ["EnsembleTagger", "average_marginals", "union_labels"]


def union_labels(label_sets: Sequence[Sequence[str]]) -> list[str]:
    """Every label of the members in the taggers' order: 'O', then B-/I- per type in sorted type order."""
    seen = {label for labels in label_sets for label in labels}
    types = sorted({label_of(label) for label in seen if label != OUTSIDE})
    return [OUTSIDE] + [f"{prefix}-{kind}" for kind in types for prefix in ("B", "I") if f"{prefix}-{kind}" in seen]


def average_marginals(
    members: Sequence[Sequence[np.ndarray]], member_labels: Sequence[Sequence[str]], labels: Sequence[str],
    weights: Sequence[float],
) -> list[np.ndarray]:
    """Per document, the weighted mean of the members' marginals in the columns of ``labels``.

    ``members[k][d]`` is member k's (tokens, labels) array for document d, its columns in ``member_labels[k]``
    order; the weights need not sum to 1 (they are normalised) but must be ≥ 0 with a positive sum.
    """
    if len(members) != len(member_labels) or len(members) != len(weights):
        raise ValueError(f"{len(members)} members, {len(member_labels)} label lists and {len(weights)} weights")
    w = np.asarray(weights, dtype=np.float64)
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"the weights must be ≥ 0 with a positive sum, not {list(weights)}")
    w = w / w.sum()
    column = {label: j for j, label in enumerate(labels)}
    columns = []
    for own in member_labels:
        missing = [label for label in own if label not in column]
        if missing:
            raise ValueError(f"labels {missing} of a member are not among {list(labels)}")
        columns.append(np.array([column[label] for label in own], dtype=np.intp))
    n_docs = {len(m) for m in members}
    if len(n_docs) != 1:
        raise ValueError(f"the members gave marginals for different numbers of documents: {sorted(n_docs)}")
    out = []
    for d in range(n_docs.pop()):
        rows = {m[d].shape[0] for m in members}
        if len(rows) != 1:
            raise ValueError(f"document {d}: the members gave {sorted(rows)} token rows")
        mean = np.zeros((rows.pop(), len(labels)))
        for k, m in enumerate(members):
            mean[:, columns[k]] += w[k] * m[d]
        out.append(mean / mean.sum(axis=1, keepdims=True).clip(min=1e-300))
    return out


class EnsembleTagger(BaseTagger):
    """The CRF and the BiLSTM-CRF (or any taggers of the registry), their marginals averaged.

    ``members`` are registry names; ``member_params`` the parameters of each (by name); ``weights`` one per
    member (equal when None). The members are fitted one after the other on the same documents.
    """

    def __init__(
        self,
        *,
        members: tuple[str, ...] = ("crf", "flair"),
        weights: tuple[float, ...] | None = None,
        member_params: Mapping[str, Mapping[str, Any]] | None = None,
        seed: int = 0,
    ) -> None:
        self.members = members
        self.weights = weights
        self.member_params = member_params
        self.seed = seed

    def _weights(self) -> tuple[float, ...]:
        weights = self.weights if self.weights is not None else (1.0,) * len(self.members)
        if len(weights) != len(self.members):
            raise ValueError(f"{len(self.members)} members but {len(weights)} weights")
        return tuple(weights)

    def fit(self, docs: Sequence[Document]) -> "EnsembleTagger":
        weights = self._weights()
        params = self.member_params or {}
        fitted = [make_tagger(name, seed=self.seed, **dict(params.get(name, {}))).fit(docs) for name in self.members]
        self.members_ = fitted
        self.labels_ = union_labels([member.labels_ for member in fitted])
        self.weights_ = weights
        return self

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        self._check_fitted()
        return average_marginals([member.predict_marginals(docs) for member in self.members_],
                                 [member.labels_ for member in self.members_], self.labels_, self.weights_)

    def tokens(self, docs: Sequence[Document]) -> list[list[Token]]:
        self._check_fitted()
        return self.members_[0].tokens(docs)

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Spans of the best valid BIO sequence of the averaged marginals."""
        return [decoded_spans(t, m, self.labels_) for t, m in zip(self.tokens(docs), self.predict_marginals(docs))]
