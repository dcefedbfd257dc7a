"""Linear-chain CRF tagger (sklearn-crfsuite, L-BFGS with L1 ``c1`` and L2 ``c2``), with fast marginals.

Training and Viterbi decoding are crfsuite's.  Marginals do not go through crfsuite's per-label Python
calls: after training, the model's attribute x label weights and label x label transition weights are
read from the model file at full precision; a document's cached token x attribute matrix times those
weights gives every token's label scores, and :func:`~learning.core.marginals.forward_backward_batch` runs
over sentences grouped by length.  The result equals crfsuite's own marginals up to floating-point
rounding.
"""
from __future__ import annotations

from typing import Collection, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from corpus.bio import bio_to_spans, spans_to_bio
from learning.core._compat import crfsuite as crfsuite_compat
from learning.core._compat.crfsuite import CRFModelFormatError, read_crfsuite_weights
from learning.core.features import DEFAULT_CACHE, DocumentFeatures, FeatureCache, FeatureExtractor, get_extractor
from learning.core.marginals import forward_backward_batch
from learning.core.taggers.base import BaseTagger, labels_from_tags
from corpus.types import Document, Span

__all__ = ["CRFTagger", "CRFModelFormatError", "read_crfsuite_weights"]


class CRFTagger(BaseTagger):
    """CRF over the features of :mod:`learning.core.features`, trained on the sentences of gold documents.

    Parameters are crfsuite's L-BFGS settings (``c1`` L1, ``c2`` L2, ``max_iterations``, ``epsilon``,
    ``all_possible_transitions``), the project's ``gazetteers`` (name -> entries) and the
    ``feature_cache`` shared by every tagger of the process (documents are featurized once).  The
    defaults were chosen on MEDDOCAN dev (entity F1 0.957-0.958 for c1 in 0.02-0.1, c2 in 0.01-0.1; with
    c1=0.1, c2=0.05: 30 iterations 0.957, 50 iterations 0.960, 100 iterations 0.958 in twice the time of 50,
    which is what a retrain waits for).

    Fitted attributes: ``labels_`` (BIO labels, 'O' first, only labels seen in training), ``crf_`` (the
    sklearn-crfsuite model), ``attributes_`` (the model's attribute strings by id), ``state_weights_``
    (attributes x labels) and ``transition_weights_`` (labels x labels, from row to column).
    """

    def __init__(
        self,
        c1: float = 0.1,
        c2: float = 0.05,
        max_iterations: int = 50,
        epsilon: float = 1e-5,
        all_possible_transitions: bool = True,
        gazetteers: Mapping[str, Collection[str]] | None = None,
        feature_cache: FeatureCache | None = None,
    ) -> None:
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.epsilon = epsilon
        self.all_possible_transitions = all_possible_transitions
        self.gazetteers = gazetteers
        self.feature_cache = feature_cache

    # Features -------------------------------------------------------------------------------------------
    def _extractor(self) -> FeatureExtractor:
        return get_extractor(self.gazetteers)

    def features(self, docs: Sequence[Document]) -> list[DocumentFeatures]:
        """The (cached) features of ``docs``."""
        cache = self.feature_cache if self.feature_cache is not None else DEFAULT_CACHE
        extractor = self._extractor()
        return [cache.get(extractor, doc.text) for doc in docs]

    # Training -------------------------------------------------------------------------------------------
    def fit(self, docs: Sequence[Document]) -> "CRFTagger":
        import sklearn_crfsuite

        if len(docs) == 0:
            raise ValueError("cannot fit a CRF on no documents")
        feats = self.features(docs)
        xs: list[list[list[str]]] = []
        ys: list[list[str]] = []
        for doc, f in zip(docs, feats):
            tags, _ = spans_to_bio(f.tokens, doc.spans)
            for a, b in f.sentences:
                xs.append(f.items(a, b))
                ys.append(tags[a:b])
        if not xs:
            raise ValueError("cannot fit a CRF on documents without tokens")
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs",
            c1=self.c1,
            c2=self.c2,
            max_iterations=self.max_iterations,
            epsilon=self.epsilon,
            all_possible_transitions=self.all_possible_transitions,
        )
        crf.fit(xs, ys)
        self.crf_ = crf
        self._read_model()
        return self

    def _read_model(self) -> None:
        info = crfsuite_compat.model_dump(self.crf_)
        crf_labels = [None] * len(info.labels)
        for name, i in info.labels.items():
            crf_labels[int(i)] = name
        attributes = [""] * len(info.attributes)
        for name, i in info.attributes.items():
            attributes[int(i)] = name
        self.labels_ = labels_from_tags([crf_labels])
        column = np.array([self.labels_.index(lab) for lab in crf_labels], dtype=np.int64)
        n_labels = len(self.labels_)

        model = crfsuite_compat.model_file_bytes(self.crf_)
        try:
            n_model_labels, n_attrs, records = read_crfsuite_weights(model)
            if n_model_labels != len(crf_labels) or n_attrs != len(attributes):
                raise CRFModelFormatError("label or attribute counts disagree with crfsuite's dump")
            state = records[records["type"] == 0]
            trans = records[records["type"] == 1]
            weights = np.zeros((n_attrs, n_labels))
            weights[state["src"].astype(np.int64), column[state["dst"].astype(np.int64)]] = state["weight"]
            transition = np.zeros((n_labels, n_labels))
            transition[column[trans["src"].astype(np.int64)], column[trans["dst"].astype(np.int64)]] = trans["weight"]
            self._check_against_dump(info, attributes, weights, transition)
        except CRFModelFormatError:
            # The dump rounds weights to 6 decimals; still a faithful model, marginals within ~1e-5.
            attr_index = {a: i for i, a in enumerate(attributes)}
            label_index = {lab: i for i, lab in enumerate(self.labels_)}
            weights = np.zeros((len(attributes), n_labels))
            for (attr, lab), w in info.state_features.items():
                weights[attr_index[attr], label_index[lab]] = w
            transition = np.zeros((n_labels, n_labels))
            for (a, b), w in info.transitions.items():
                transition[label_index[a], label_index[b]] = w
        self.attributes_ = attributes
        self.state_weights_ = weights
        self.transition_weights_ = transition
        self._vocab_rows = None

    def _check_against_dump(self, info, attributes, weights, transition) -> None:
        attr_index = {a: i for i, a in enumerate(attributes)}
        label_index = {lab: i for i, lab in enumerate(self.labels_)}
        for (attr, lab), w in list(info.state_features.items())[:2000]:
            if abs(weights[attr_index[attr], label_index[lab]] - w) > 1e-6:
                raise CRFModelFormatError("state weights disagree with crfsuite's dump")
        for (a, b), w in info.transitions.items():
            if abs(transition[label_index[a], label_index[b]] - w) > 1e-6:
                raise CRFModelFormatError("transition weights disagree with crfsuite's dump")

    def __getstate__(self) -> dict:
        # Cached features are process-local: a pickled tagger carries its model, not the cache (an
        # unpickled tagger featurizes through the process-wide default cache).
        state = self.__dict__.copy()
        state["_vocab_rows"] = None
        state["feature_cache"] = None
        return state

    # Prediction -----------------------------------------------------------------------------------------
    def _rows_for_vocabulary(self, extractor: FeatureExtractor) -> np.ndarray:
        """Vocabulary id -> model attribute row (-1 where the model does not know the attribute)."""
        vocab = extractor.vocabulary
        cached = getattr(self, "_vocab_rows", None)
        if cached is None or cached[0] is not vocab:
            ids = np.fromiter((vocab.intern(a) for a in self.attributes_), dtype=np.int64, count=len(self.attributes_))
            rows = np.full(len(vocab), -1, dtype=np.int64)
            rows[ids] = np.arange(len(ids))
            cached = (vocab, rows)
        elif cached[1].shape[0] < len(vocab):
            # Attributes interned since were not in the model (its attributes were interned first).
            rows = np.full(len(vocab), -1, dtype=np.int64)
            rows[: cached[1].shape[0]] = cached[1]
            cached = (vocab, rows)
        self._vocab_rows = cached
        return cached[1]

    def _unary(self, feats: Sequence[DocumentFeatures]) -> np.ndarray:
        """Label scores (all tokens of all documents, labels) = token x attribute matrix @ weights."""
        n_tokens = sum(f.n_tokens for f in feats)
        n_labels = len(self.labels_)
        if n_tokens == 0:
            return np.zeros((0, n_labels))
        rows_of = self._rows_for_vocabulary(self._extractor())
        indices = np.concatenate([f.indices for f in feats])
        offsets = np.cumsum([0] + [int(f.indptr[-1]) for f in feats[:-1]])
        indptr = np.concatenate([f.indptr[:-1] + off for f, off in zip(feats, offsets)] + [[indices.shape[0]]])
        rows = rows_of[indices]
        known = rows >= 0
        kept = np.concatenate(([0], np.cumsum(known)))
        matrix = sp.csr_matrix(
            (np.ones(int(kept[-1])), rows[known], kept[indptr]),
            shape=(n_tokens, self.state_weights_.shape[0]),
        )
        return np.asarray(matrix @ self.state_weights_)

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """Per document, P(label | token) as an array (n_tokens, n_labels) in ``labels_`` order."""
        self._check_fitted()
        feats = self.features(docs)
        unary = self._unary(feats)
        starts: list[int] = []
        lengths: list[int] = []
        offset = 0
        for f in feats:
            for a, b in f.sentences:
                starts.append(offset + a)
                lengths.append(b - a)
            offset += f.n_tokens
        marginals = _chain_marginals(unary, np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64),
                                     self.transition_weights_)
        out = []
        offset = 0
        for f in feats:
            out.append(marginals[offset : offset + f.n_tokens])
            offset += f.n_tokens
        return out

    def predict_marginals_reference(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """The same marginals computed by crfsuite itself, one label and position at a time (slow)."""
        self._check_fitted()
        tagger = self.crf_.tagger_
        crf_labels = tagger.labels()
        columns = [self.labels_.index(lab) for lab in crf_labels]
        out = []
        for f in self.features(docs):
            m = np.zeros((f.n_tokens, len(self.labels_)))
            for a, b in f.sentences:
                tagger.set(f.items(a, b))
                for pos in range(b - a):
                    for lab, col in zip(crf_labels, columns):
                        m[a + pos, col] = tagger.marginal(lab, pos)
            out.append(m)
        return out

    def predict_tags(self, docs: Sequence[Document]) -> list[list[str]]:
        """crfsuite's Viterbi labels per token of each document."""
        self._check_fitted()
        tagger = self.crf_.tagger_
        out = []
        for f in self.features(docs):
            tags: list[str] = []
            for a, b in f.sentences:
                tags.extend(tagger.tag(f.items(a, b)))
            out.append(tags)
        return out

    def predict(self, docs: Sequence[Document]) -> list[list[Span]]:
        feats = self.features(docs)
        return [bio_to_spans(f.tokens, tags) for f, tags in zip(feats, self.predict_tags(docs))]


def _chain_marginals(
    unary: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    transition: np.ndarray,
    max_padding: float = 0.25,
    max_bucket_tokens: int = 32768,
) -> np.ndarray:
    """Marginals of many chains stored back to back in ``unary``; chains of similar length share a batch."""
    out = np.zeros_like(unary)
    n = lengths.shape[0]
    if n == 0:
        return out
    order = np.argsort(lengths, kind="stable")
    i = 0
    while i < n:
        shortest = int(lengths[order[i]])
        limit = max(shortest + 1, int(shortest * (1.0 + max_padding)))
        j = i + 1
        while j < n and lengths[order[j]] <= limit and (j - i + 1) * lengths[order[j]] <= max_bucket_tokens:
            j += 1
        chosen = order[i:j]
        lens = lengths[chosen]
        width = int(lens.max())
        if width > 0:
            steps = np.arange(width)
            inside = steps[None, :] < lens[:, None]
            pos = np.where(inside, starts[chosen][:, None] + steps[None, :], 0)
            result = forward_backward_batch(unary[pos], lens, transition)
            out[pos[inside]] = result[inside]
        i = j
    return out
