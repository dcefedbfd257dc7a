"""A CRF trainer of the project's own: crfsuite's objective, minimised by L-BFGS from any starting weights.

crfsuite fits from zero every time; after a batch of five records most of the answer is already in the
current model.  This trainer minimises the same objective as crfsuite's L-BFGS,

    f(w) = -sum_s log p(y_s | x_s; w) + c1 ||w||_1 + c2 ||w||_2^2,

over the same features — one weight per (attribute, label) pair seen in the training tokens and one per
(label, label) transition — and can start from a previous model's weights (:func:`warm_start`): weights
of attributes and labels it knew are kept, new ones start at zero, so a retrain after a batch converges in a
few iterations instead of fifty.

The negative log-likelihood and its gradient come from one pass of the vectorised forward-backward over
sentences grouped by length: label scores are the cached token x attribute matrix times the attribute x
label weights, and the forward recursion (:func:`learning.core.marginals.chain_forward`) gives the value;
the backward one (:func:`learning.core.marginals.chain_backward`) gives the marginals, and the gradient of
the state weights is the expected minus the observed attribute counts, ``X^T (P - Y)`` read at the features,
and of the transitions the expected minus the observed label bigram counts. The trainer asks for the
gradient only where it needs it (a step kept, not the last), so a rejected trial step costs the value alone.
The L1 term is handled by orthant-wise limited-memory quasi-Newton (OWL-QN, crfsuite's own choice for L1),
written here so that it can start anywhere and stop after a few iterations.

A warm fit also starts from what the fit before it learnt of the objective's curvature: L-BFGS's last steps
and the gradient's change along each (:class:`Curvature`), laid out on the grown documents' features
(:func:`carried_steps`). Its first step is then a quasi-Newton one rather than the gradient scaled, and a fit
of two iterations gets further than one of three without them.

Its first pass, at the previous model's weights, can be known before it starts: what the objective sums over
the documents the previous model was fitted on, at that model's weights (:class:`Expectations`,
:func:`model_expectations`), computed while the process has nothing else to do, then only the documents that
came or changed since are passed over and the sums put together (:func:`known_start`).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from corpus.bio import OUTSIDE
from learning.core.features import DocumentFeatures
from learning.core.marginals import chain_backward, chain_forward, length_batches
from learning.core.taggers.base import labels_from_tags

__all__ = [
    "CRFWeights", "Curvature", "Expectations", "TrainingSet", "carried_steps", "columns_losing_weights",
    "feature_expectations", "fit_weights", "known_start", "label_ids", "label_ids_of_runs", "model_expectations",
    "training_set", "training_set_of_runs", "warm_start",
]

#: Sentences of similar length share a batch of the forward-backward; padding is at most this share.
MAX_PADDING = 0.25
MAX_BUCKET_TOKENS = 32768
#: The expected counts of an attribute held by at least this many training tokens are summed in double
#: precision, from single-precision sums over runs of ``FREQUENT_RUN_TOKENS`` tokens (see :class:`Objective`).
FREQUENT_ATTRIBUTE_TOKENS = 1024
FREQUENT_RUN_TOKENS = 4096


@dataclass
class CRFWeights:
    """A trained linear-chain CRF: attribute x label state weights and label x label transition weights."""

    attributes: list[str]
    labels: list[str]
    state: np.ndarray  # (n_attributes, n_labels)
    transition: np.ndarray  # (n_labels, n_labels), from row to column
    iterations: int = 0
    objective: float = 0.0
    step_scale: float | None = None  # the trainer's last curvature scale (see :func:`owlqn`)
    evaluations: int = 0  # of the objective, each a pass over the training set (not the known first one)
    gradients: int = 0  # of those, how many went on to the gradient (three fifths of the work of a pass)
    carried_steps: int = 0  # of an earlier fit's curvature, that this fit started from
    known_start: bool = False  # whether its first value and gradient were given (see :func:`fit_weights`)
    vocabulary_ids: np.ndarray | None = None  # of the attributes, when fitted on a training set that has them
    curvature: "Curvature | None" = None  # the trainer's last steps, for a next fit to start from


@dataclass
class Curvature:
    """What L-BFGS learnt of the objective's curvature in a fit: its last steps ``s`` and the change ``y`` of
    the gradient along each, over the features of that fit's training set, named by the vocabulary id of their
    attribute and by their label, so that a next fit on grown documents can start from them
    (:func:`carried_steps`). Vocabulary ids are those of one process's extractor: a curvature does not travel.
    It holds two vectors of the objective's length a step (up to ``history``: 33 MB on 500 MEDDOCAN records)."""

    keys: np.ndarray  # each state feature's vocabulary id * len(labels) + its label's index in labels
    labels: list[str]
    steps: list[tuple[np.ndarray, np.ndarray]]


@dataclass
class Expectations:
    """What the objective sums over a set of documents at some weights, apart from their gold: the log partition
    functions of their sentences, and the expected count of every (attribute, label) pair and label bigram.
    Known for the documents a model was fitted on, at its weights, they spare the next fit on those documents
    and a few more its first pass (:func:`known_start`). The counts take attributes x labels x 4 bytes (50 MB
    on 500 MEDDOCAN records)."""

    labels: list[str]
    vocabulary_ids: np.ndarray  # the attribute of each row of ``counts``, sorted
    counts: np.ndarray  # (attributes, labels), float32
    transitions: np.ndarray  # (labels, labels)
    log_z: float


@dataclass
class TrainingSet:
    """Training tokens in the form the objective needs, built once per fit."""

    strings: Sequence[str]  # the extractor's attribute strings by vocabulary id (its own list)
    labels: list[str]
    vocabulary_ids: np.ndarray  # the extractor's vocabulary id of each attribute (column of ``matrix``)
    feature_rows: np.ndarray  # the (attribute, label) pairs seen in training: the state features, by attribute (sorted)
    feature_cols: np.ndarray
    observed: np.ndarray  # their counts
    matrix: sp.csr_matrix  # tokens x attributes, binary
    observed_transitions: np.ndarray  # (n_labels, n_labels) label bigram counts
    buckets: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # (positions, inside mask, lengths)

    @property
    def n_features(self) -> int:
        return int(self.feature_rows.shape[0]) + len(self.labels) ** 2

    @property
    def attributes(self) -> list[str]:
        """The attribute strings by column of ``matrix`` (made when asked: a fit names only those it keeps)."""
        return [self.strings[i] for i in self.vocabulary_ids.tolist()]


def label_ids(tags: Sequence[Sequence[str]], labels: Sequence[str]) -> np.ndarray:
    """The index in ``labels`` of every token's tag, documents (one BIO tag per token) back to back."""
    label_index = {lab: i for i, lab in enumerate(labels)}
    return np.fromiter((label_index[t] for doc_tags in tags for t in doc_tags), dtype=np.int64,
                       count=sum(len(doc_tags) for doc_tags in tags))


def label_ids_of_runs(
    lengths: Sequence[int], runs: Sequence[Sequence[tuple[int, int, str]]], known: Sequence[str] = (),
) -> tuple[list[str], np.ndarray]:
    """What :func:`label_ids` gives for the BIO tags of documents of ``lengths`` tokens whose gold is ``runs``
    (per document, ``(first, end, type)`` as :func:`corpus.bio.token_runs` gives them: ``B-`` on a run's first
    token, ``I-`` on the rest, ``O`` elsewhere), without writing the tags: ``(labels, ids)``, the labels those
    tags and ``known`` hold in the taggers' order (:func:`~learning.core.taggers.base.labels_from_tags`)."""
    seen = {f"B-{label}" for doc_runs in runs for _, _, label in doc_runs}
    seen.update(f"I-{label}" for doc_runs in runs for first, end, label in doc_runs if end - first > 1)
    labels = labels_from_tags([sorted(seen), list(known)])
    index = {lab: i for i, lab in enumerate(labels)}
    ids = np.full(int(sum(lengths)), index[OUTSIDE], dtype=np.int64)
    offset = 0
    for n, doc_runs in zip(lengths, runs):
        for first, end, label in doc_runs:
            ids[offset + first] = index[f"B-{label}"]
            if end - first > 1:
                ids[offset + first + 1 : offset + end] = index[f"I-{label}"]
        offset += n
    return labels, ids


def training_set(feats: Sequence[DocumentFeatures], y: np.ndarray, labels: Sequence[str]) -> TrainingSet:
    """The sentences of ``feats`` labelled by ``y`` (the index in ``labels`` of each token's BIO tag, documents
    back to back: :func:`label_ids`)."""
    indices = np.concatenate([f.indices for f in feats]).astype(np.int64)
    offsets = np.cumsum([0] + [int(f.indptr[-1]) for f in feats[:-1]])
    indptr = np.concatenate([f.indptr[:-1] + off for f, off in zip(feats, offsets)] + [[indices.shape[0]]])
    strings = feats[0].vocabulary.strings
    present = np.zeros(len(strings), dtype=bool)
    present[indices] = True
    vocab_ids = np.flatnonzero(present)
    columns = (np.cumsum(present) - 1)[indices]
    n_tokens = indptr.shape[0] - 1
    # Binary: exact in float32, the objective's usual precision, which then reads the values without a copy.
    matrix = sp.csr_matrix((np.ones(columns.shape[0], dtype=np.float32), columns, indptr),
                           shape=(n_tokens, vocab_ids.shape[0]))
    y = np.asarray(y, dtype=np.int64)
    if y.shape != (n_tokens,):
        raise ValueError(f"{y.shape[0]} labels for {n_tokens} tokens")

    starts, lengths = [], []
    offset = 0
    for f in feats:
        for a, b in f.sentences:
            if b > a:
                starts.append(offset + a)
                lengths.append(b - a)
        offset += f.n_tokens
    starts_a, lengths_a = np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)

    # The (attribute, label) pairs and their counts: the tokens of each label summed, then laid out by attribute
    # (a product label by label reads the matrix once, where one attribute by attribute would transpose it).
    by_label = sp.csr_matrix((np.ones(n_tokens), y, np.arange(n_tokens + 1)), shape=(n_tokens, len(labels))).T
    counts = (by_label.tocsr() @ matrix).T.tocsr()
    counts.sort_indices()
    feature_rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    feature_cols = counts.indices.astype(np.int64)
    n_labels = len(labels)
    bigrams = np.zeros((n_labels, n_labels))
    # Every token followed by one of its sentence: a sentence's positions but its last.
    pairs = lengths_a - 1
    following = np.arange(int(pairs.sum())) + np.repeat(starts_a - (np.cumsum(pairs) - pairs), pairs)
    np.add.at(bigrams, (y[following], y[following + 1]), 1.0)
    return TrainingSet(
        strings=strings, labels=list(labels), vocabulary_ids=vocab_ids, feature_rows=feature_rows,
        feature_cols=feature_cols,
        observed=counts.data, matrix=matrix,
        observed_transitions=bigrams, buckets=_buckets(starts_a, lengths_a),
    )


def training_set_of_runs(
    feats: Sequence[DocumentFeatures], runs: Sequence[Sequence[tuple[int, int, str]]], known: Sequence[str] = (),
) -> TrainingSet:
    """:func:`training_set` of documents whose gold is token ``runs``, labelled as :func:`label_ids_of_runs`
    labels them (``known``: labels kept besides theirs)."""
    labels, y = label_ids_of_runs([f.n_tokens for f in feats], runs, known)
    return training_set(feats, y, labels)


def _buckets(starts: np.ndarray, lengths: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per batch of sentences of similar length: their token positions, padded and time-major (T, B) as the
    forward-backward reads them, the mask of real ones and their lengths."""
    out = []
    for chosen in length_batches(lengths, MAX_PADDING, MAX_BUCKET_TOKENS):
        lens = lengths[chosen]
        steps = np.arange(int(lens.max()))
        inside = steps[:, None] < lens[None, :]
        out.append((np.where(inside, starts[chosen][None, :] + steps[:, None], 0), inside, lens))
    return out


class Objective:
    """The smooth part of crfsuite's objective, ``NLL(w) + c2 ||w||^2``, and its gradient.

    ``w`` is the state features' weights (in ``data.feature_rows`` order) followed by the transitions
    (row-major).  The products and the forward-backward run in ``dtype``: float32 is three times faster
    and its rounding (about 1e-4 on the objective of MEDDOCAN train) is far below what L-BFGS resolves;
    float64 for checks against finite differences and crfsuite.

    :meth:`value` takes the label scores and the forward recursion alone (about two fifths of the work);
    :meth:`gradient` then finishes the same pass for the gradient at that point (the backward recursion and
    the attributes' expected counts). A line search asks for the gradient only at the step it keeps, and a
    fit not at its last point. Calling the objective does both.

    With ``threads`` > 1 the products are split by rows and the batches of sentences shared among that many
    threads (numpy and scipy release the interpreter lock in them); every sum is still taken in the same
    order, so the value and gradient are the same as with one thread. Call :meth:`close` when done.
    """

    def __init__(self, data: TrainingSet, c2: float, dtype: type = np.float32, threads: int = 1) -> None:
        self.data = data
        self.c2 = c2
        self.dtype = dtype
        self.n_state = int(data.feature_rows.shape[0])
        self.threads = max(1, int(threads))
        self._blocks = _row_blocks(data.matrix, self.threads, dtype)
        # For the gradient, each thread sums the expected label counts of a run of attributes (a block of the
        # matrix's columns) over the tokens, token after token: the transpose of its block, as scipy multiplies
        # a column-major matrix, reads the counts once, row after row, where a product with a row-major
        # transpose reads them once per attribute (twice as slow on MEDDOCAN). Every sum is taken in token
        # order, whatever the number of threads. The state features are by attribute, so each thread reads its
        # features' gradient out of its own product, and the whole attribute x label product is never put
        # together.
        #   Summed so in single precision, the count of an attribute that tens of thousands of tokens hold is off
        # by units, and the gradient's change along a step, which L-BFGS reads as curvature, by as much: fits
        # that start from a first pass summed otherwise (:func:`known_start`) then converge worse. The frequent
        # attributes' counts (a few hundred attributes, two thirds of the entries) are instead summed over runs
        # of tokens, the runs' sums added in double precision, in run order.
        #   The two sets of entries are made side by side when there are threads for it.
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        matrix = data.matrix
        held = np.bincount(matrix.indices, minlength=matrix.shape[1])
        frequent = held >= FREQUENT_ATTRIBUTE_TOKENS
        in_frequent = frequent[matrix.indices]
        column = np.cumsum(frequent) - 1  # a frequent attribute's column among the frequent ones
        self._frequent = np.flatnonzero(frequent)
        self._columns, by_frequent = self._map(lambda make: make(), [
            lambda: _column_blocks(_entries(matrix, ~in_frequent, dtype=dtype), self.threads, dtype,
                                   np.where(frequent, 0, held)),
            lambda: _entries(matrix, in_frequent, column, self._frequent.shape[0], dtype),
        ])
        first_rows = np.cumsum([0] + [block.shape[1] for block in self._columns])
        cuts = np.searchsorted(data.feature_rows, first_rows)
        self._features_t = [(data.feature_rows[a:b] - first, data.feature_cols[a:b])
                            for a, b, first in zip(cuts[:-1], cuts[1:], first_rows[:-1].tolist())]
        self._runs = _row_runs(by_frequent, FREQUENT_RUN_TOKENS)
        of_frequent = frequent[data.feature_rows]
        self._frequent_features = (np.flatnonzero(of_frequent), column[data.feature_rows[of_frequent]],
                                   data.feature_cols[of_frequent])
        self._pending: tuple[np.ndarray, np.ndarray, list] | None = None  # the last value's point and passes
        self.calls = 0  # values: passes over the training set
        self.gradients = 0

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _map(self, function, items) -> list:
        if self._pool is None:
            return [function(item) for item in items]
        return list(self._pool.map(function, items))

    def _product(self, blocks: list[sp.csr_matrix], dense: np.ndarray) -> np.ndarray:
        parts = self._map(lambda block: block @ dense, blocks)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def unpack(self, w: np.ndarray, dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
        n_labels = len(self.data.labels)
        state = np.zeros((self.data.matrix.shape[1], n_labels), dtype=dtype)
        state[self.data.feature_rows, self.data.feature_cols] = w[: self.n_state]
        return state, w[self.n_state :].reshape(n_labels, n_labels)

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        return self.value(w), self.gradient()

    def value(self, w: np.ndarray) -> float:
        """The objective at ``w``; :meth:`gradient` then gives its gradient there."""
        self.calls += 1
        data = self.data
        state, transition = self.unpack(w, self.dtype)
        unary, forwards, log_z = self._forward(state, transition)
        gold = float(w[: self.n_state] @ data.observed) + float((transition * data.observed_transitions).sum())
        self._pending = (w, unary, forwards)
        return log_z - gold + self.c2 * float(w @ w)

    def _forward(self, state: np.ndarray, transition: np.ndarray) -> tuple[np.ndarray, list, float]:
        """The label scores of every token, the forward recursion of each batch and the summed log Z."""
        unary = self._product(self._blocks, state)
        forwards = self._map(lambda bucket: chain_forward(unary[bucket[0]], bucket[2], transition),
                             self.data.buckets)
        log_z = 0.0
        for forward in forwards:
            log_z += float(forward.log_z.sum())
        return unary, forwards, log_z

    def _backward(self, unary: np.ndarray, forwards: list) -> tuple[np.ndarray, np.ndarray]:
        """The marginals of every token (tokens, labels) and the expected label bigram counts (summed in
        float64), from :meth:`_forward`'s recursions."""
        expected = np.zeros_like(unary)

        def backward(bucket_and_forward) -> np.ndarray:
            (positions, inside, _), forward = bucket_and_forward
            _, post, edges = chain_backward(forward)
            expected[positions[inside]] = post[inside]  # a batch's own tokens: no two threads write a row
            return edges

        n_labels = len(self.data.labels)
        expected_transitions = np.zeros((n_labels, n_labels))
        for edges in self._map(backward, zip(self.data.buckets, forwards)):
            expected_transitions += edges
        return expected, expected_transitions

    def expectations(self, state: np.ndarray, transition: np.ndarray) -> Expectations:
        """The :class:`Expectations` of the training set's documents at the weights ``state`` (a row for each
        attribute of the training set, a column for each of its labels: every weight, not only its features')
        and ``transition``; computed in the objective's precision."""
        unary, forwards, log_z = self._forward(state.astype(self.dtype), transition.astype(self.dtype))
        expected, transitions = self._backward(unary, forwards)
        counts = np.concatenate(self._map(lambda block: block.T @ expected, self._columns))
        counts[self._frequent] = self._frequent_counts(expected)
        return Expectations(list(self.data.labels), self.data.vocabulary_ids, counts, transitions, log_z)

    def _frequent_counts(self, expected: np.ndarray) -> np.ndarray:
        """The expected counts (frequent attributes, labels) of the frequent attributes, in double precision:
        summed over each run of tokens, the runs' sums added in run order (the same on any number of threads)."""
        n_labels = expected.shape[1]
        if not self._frequent.shape[0]:
            return np.zeros((0, n_labels))
        starts = range(0, expected.shape[0], FREQUENT_RUN_TOKENS)
        sums = self._map(lambda k: self._runs[k].T @ expected[starts[k] : starts[k] + FREQUENT_RUN_TOKENS],
                         range(len(self._runs)))
        total = np.zeros((self._frequent.shape[0], n_labels))
        for run in sums:
            total += run
        return total

    def gradient(self) -> np.ndarray:
        """The gradient at the point of the last :meth:`value`."""
        if self._pending is None:
            raise RuntimeError("the gradient is taken at the point of a value: ask for the value first")
        w, unary, forwards = self._pending
        self._pending = None
        self.gradients += 1
        data = self.data
        expected, expected_transitions = self._backward(unary, forwards)

        def counts(k: int) -> np.ndarray:
            rows, cols = self._features_t[k]
            return (self._columns[k].T @ expected)[rows, cols]

        state_expected = np.concatenate(self._map(counts, range(len(self._columns)))).astype(np.float64)
        at, rows, cols = self._frequent_features
        state_expected[at] = self._frequent_counts(expected)[rows, cols]
        state_grad = state_expected - data.observed
        grad = np.concatenate([state_grad, (expected_transitions - data.observed_transitions).ravel()])
        grad += 2.0 * self.c2 * w
        return grad


def _balanced_cuts(entries: np.ndarray, n: int) -> list[int]:
    """Where to cut consecutive rows (or columns) into ``n`` runs holding about as many entries each, from
    ``entries``, the entries before each of them and after the last (``indptr``'s form); one run when there
    are fewer than two of them for each."""
    size = entries.shape[0] - 1
    if n <= 1 or size < 2 * n:
        return [0, size]
    cuts = np.searchsorted(entries, np.linspace(0, entries[-1], n + 1)[1:-1])
    return [0, *np.unique(np.clip(cuts, 1, size - 1)).tolist(), size]


def _entries(matrix: sp.csr_matrix, keep: np.ndarray, column: np.ndarray | None = None,
             n_columns: int | None = None, dtype: type = np.float32) -> sp.csr_matrix:
    """The entries of the binary ``matrix`` (a training set's) where ``keep`` (a mask of its entries), in the
    same rows, in ``dtype``; their columns renumbered by ``column`` (old column -> new) into ``n_columns`` when
    given."""
    index = matrix.indices.dtype
    before = np.concatenate([np.zeros(1, dtype=index), np.cumsum(keep, dtype=index)])[matrix.indptr]
    indices = matrix.indices[keep]
    if column is not None:
        indices = column[indices].astype(index, copy=False)
    out = sp.csr_matrix((np.ones(indices.shape[0], dtype=dtype), indices, before),
                        shape=(matrix.shape[0], matrix.shape[1] if n_columns is None else n_columns))
    out.has_sorted_indices = matrix.has_sorted_indices
    return out


def _row_blocks(matrix: sp.csr_matrix, n: int, dtype: type) -> list[sp.csr_matrix]:
    """``matrix`` in ``dtype``, cut into ``n`` blocks of consecutive rows holding about as many entries each:
    views of its index arrays (nothing sorted, summed or copied but the values)."""
    return _row_views(matrix, _balanced_cuts(matrix.indptr, n), dtype)


def _row_runs(matrix: sp.csr_matrix, rows: int) -> list[sp.csr_matrix]:
    """``matrix`` cut into runs of ``rows`` consecutive rows (the last one shorter): views, as :func:`_row_blocks`
    makes them."""
    return _row_views(matrix, [*range(0, matrix.shape[0], rows), matrix.shape[0]], matrix.dtype)


def _row_views(matrix: sp.csr_matrix, bounds: Sequence[int], dtype: type) -> list[sp.csr_matrix]:
    """The rows of ``matrix`` between each two of ``bounds`` (row numbers, ascending), in ``dtype``."""
    values = matrix.data.astype(dtype, copy=False)
    blocks = []
    for a, b in zip(bounds, bounds[1:]):
        first, last = int(matrix.indptr[a]), int(matrix.indptr[b])
        block = sp.csr_matrix((values[first:last], matrix.indices[first:last], matrix.indptr[a:b + 1] - first),
                              shape=(b - a, matrix.shape[1]), copy=False)
        block.has_sorted_indices = matrix.has_sorted_indices
        blocks.append(block)
    return blocks


def _column_blocks(matrix: sp.csr_matrix, n: int, dtype: type,
                   per_column: np.ndarray | None = None) -> list[sp.csr_matrix]:
    """``matrix`` in ``dtype``, cut into ``n`` blocks of consecutive columns holding about as many entries each
    (copies of its entries in those columns; the matrix itself, its values in ``dtype``, when one block);
    ``per_column``: its entries in each column, when known."""
    whole = _row_blocks(matrix, 1, dtype)[0]
    if n <= 1:
        return [whole]
    if per_column is None:
        per_column = np.bincount(matrix.indices, minlength=matrix.shape[1])
    bounds = _balanced_cuts(np.concatenate([[0], np.cumsum(per_column)]), n)
    return [whole] if len(bounds) == 2 else [whole[:, a:b] for a, b in zip(bounds, bounds[1:])]


def fit_weights(
    data: TrainingSet, *, c1: float, c2: float, max_iterations: int, epsilon: float = 1e-5,
    init: np.ndarray | None = None, history: int = 6, dtype: type = np.float32, step_scale: float | None = None,
    curvature: Curvature | None = None, threads: int = 1,
    start: tuple[float, np.ndarray] | Callable[[], tuple[float, np.ndarray] | None] | None = None,
) -> CRFWeights:
    """Minimise crfsuite's objective on ``data`` from ``init`` (zero when None) by OWL-QN (:func:`owlqn`),
    its first step scaled by ``step_scale`` (the previous fit's, when it continues one), the objective computed
    on ``threads`` threads; ``start``, when given, is the objective's value and gradient at ``init`` without the
    L1 term (:func:`known_start`), which spares the first pass, or a function that returns them or None: it
    then runs on a thread of its own while the objective is set up.

    Stops after ``max_iterations`` iterations or when an iteration improves the objective by less than
    ``epsilon`` relatively.
    """
    n = data.n_features
    w0 = np.zeros(n) if init is None else np.asarray(init, dtype=np.float64)
    if w0.shape != (n,):
        raise ValueError(f"initial weights have shape {w0.shape}, the model has {n} features")
    with ThreadPoolExecutor(1) as aside:
        known = aside.submit(start) if callable(start) else None
        objective = Objective(data, c2, dtype, threads=threads)
        try:
            carried = carried_steps(data, curvature) if curvature is not None else []
            start = known.result() if known is not None else start
        except BaseException:
            objective.close()
            raise
    try:
        w, value, iterations, scale, steps = owlqn(
            objective, w0, c1=c1, max_iterations=max_iterations, epsilon=epsilon, history=history,
            initial_scale=step_scale, initial_steps=carried, start=start)
    finally:
        objective.close()
    n_labels = len(data.labels)
    kept = Curvature(keys=data.vocabulary_ids[data.feature_rows] * n_labels + data.feature_cols,
                     labels=data.labels, steps=[(s, y) for s, y, _ in steps])
    # Like crfsuite's model file, the model keeps only the attributes with a weight (L1 zeroes most): their
    # rows, from the features with one, made without the whole attribute x label table.
    n_state = objective.n_state
    weighted = np.flatnonzero(w[:n_state])
    rows = data.feature_rows[weighted]  # sorted, as the features are by attribute
    used = rows[np.concatenate([[True], rows[1:] != rows[:-1]])] if rows.shape[0] else rows
    state = np.zeros((used.shape[0], n_labels))
    state[np.searchsorted(used, rows), data.feature_cols[weighted]] = w[weighted]
    vocabulary_ids = data.vocabulary_ids[used]
    return CRFWeights(attributes=[data.strings[i] for i in vocabulary_ids.tolist()], labels=data.labels,
                      vocabulary_ids=vocabulary_ids, state=state,
                      transition=w[n_state:].reshape(n_labels, n_labels).copy(), iterations=iterations,
                      objective=value,
                      step_scale=scale, evaluations=objective.calls,
                      gradients=objective.gradients, carried_steps=len(carried), curvature=kept,
                      known_start=start is not None)


def owlqn(
    smooth, x0: np.ndarray, *, c1: float, max_iterations: int, epsilon: float, history: int = 6,
    max_backtracks: int = 30, initial_scale: float | None = None,
    initial_steps: Sequence[tuple[np.ndarray, np.ndarray, float]] = (), start: tuple[float, np.ndarray] | None = None,
) -> tuple[np.ndarray, float, int, float | None, list[tuple[np.ndarray, np.ndarray, float]]]:
    """Minimise ``smooth(x) + c1 ||x||_1`` by orthant-wise limited-memory quasi-Newton (Andrew and Gao, 2007;
    crfsuite's L1 trainer), which is plain L-BFGS when ``c1`` is 0. ``smooth`` returns value and gradient, or
    has ``value(x)`` and ``gradient()`` (the gradient at the last value's point, as :class:`Objective`): the
    gradient is then asked for only at the steps kept, and not at the last one.

    Each iteration: the pseudo-gradient (the L1 term's one-sided derivative chosen towards descent), a
    two-loop L-BFGS direction from the last ``history`` steps, zeroed where it does not descend, and a
    backtracking line search that keeps every weight in the orthant it started in (a weight that would
    cross zero stops at zero), each rejected step shortened by quadratic interpolation (:func:`_backtrack`).

    The first iteration has no steps to learn the curvature from: its trial step is the pseudo-gradient
    scaled to unit length, which suits a start from zero, or scaled by ``initial_scale`` — the ``s.y / y.y``
    of an earlier run's last step with a gradient at both ends, returned by this function — which suits a
    start near a minimum found before (a warm start), where a unit step overshoots by orders of magnitude and
    costs several backtracks. ``start``: the value and gradient of ``smooth`` at ``x0``, when known already.
    Returns (x, objective, iterations, that ``s.y / y.y`` or None).
    """
    if not hasattr(smooth, "gradient"):
        smooth = _BothAtOnce(smooth)
    x = np.asarray(x0, dtype=np.float64).copy()
    smooth_value, grad = (smooth.value(x), smooth.gradient()) if start is None else start
    value = smooth_value + c1 * float(np.abs(x).sum())
    steps = list(initial_steps)[-history:]
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        pseudo = _pseudo_gradient(x, grad, c1)
        direction = -_two_loop(pseudo, steps)
        if c1 > 0:
            direction[direction * pseudo >= 0] = 0.0
        slope = float(direction @ pseudo)
        if slope >= 0:  # no descent left (the pseudo-gradient is zero, or the curvature pairs misled)
            steps.clear()
            direction = -pseudo
            slope = float(direction @ pseudo)
            if slope >= 0:
                break
        orthant = np.where(x != 0, np.sign(x), -np.sign(pseudo))
        if steps:
            alpha = 1.0
        elif initial_scale is not None and initial_scale > 0:
            alpha = initial_scale
        else:
            alpha = 1.0 / max(float(np.sqrt(pseudo @ pseudo)), 1e-12)
        for _ in range(max_backtracks):
            trial = x + alpha * direction
            if c1 > 0:
                trial[np.sign(trial) != orthant] = 0.0
            trial_value = smooth.value(trial) + c1 * float(np.abs(trial).sum())
            slope_times_step = float(pseudo @ (trial - x))
            if trial_value <= value + 1e-4 * slope_times_step:
                break
            alpha *= _backtrack(value, trial_value, slope_times_step)
        else:
            break  # no step decreases the objective: as good as this precision allows
        improvement = (value - trial_value) / max(abs(trial_value), 1.0)
        if improvement < epsilon or iterations == max_iterations:
            x, value = trial, trial_value  # the last point: no gradient needed there
            break
        trial_grad = smooth.gradient()
        s, y = trial - x, trial_grad - grad
        sy = float(s @ y)
        if sy > 0:
            steps.append((s, y, sy))
            if len(steps) > history:
                steps.pop(0)
        x, value, grad = trial, trial_value, trial_grad
    scale = None
    if steps:
        _, y, sy = steps[-1]
        scale = sy / float(y @ y)
    return x, value, iterations, scale, steps


class _BothAtOnce:
    """A function returning value and gradient, asked as :func:`owlqn` asks an :class:`Objective`."""

    def __init__(self, function) -> None:
        self.function = function
        self._gradient: np.ndarray | None = None

    def value(self, x: np.ndarray) -> float:
        value, self._gradient = self.function(x)
        return value

    def gradient(self) -> np.ndarray:
        return self._gradient


def _backtrack(value: float, trial_value: float, slope_times_step: float) -> float:
    """The share of a rejected step to try next: the minimum of the parabola through the objective at the
    start (``value``, with its slope along the step) and at the rejected trial, kept within [0.1, 0.5] of the
    step (safeguarded quadratic interpolation). Where halving needs a dozen tries to come down from a step
    far too long — the first step of a fit that starts near a minimum without a scale — this needs a few."""
    curvature = trial_value - value - slope_times_step
    if not np.isfinite(curvature) or curvature <= 0.0:
        return 0.1 if not np.isfinite(trial_value) else 0.5
    return min(0.5, max(0.1, -slope_times_step / (2.0 * curvature)))


def _pseudo_gradient(x: np.ndarray, grad: np.ndarray, c1: float) -> np.ndarray:
    if c1 == 0:
        return grad
    pseudo = np.where(x > 0, grad + c1, np.where(x < 0, grad - c1, 0.0))
    zero = x == 0
    pseudo[zero & (grad + c1 < 0)] = (grad + c1)[zero & (grad + c1 < 0)]
    pseudo[zero & (grad - c1 > 0)] = (grad - c1)[zero & (grad - c1 > 0)]
    return pseudo


def _two_loop(grad: np.ndarray, steps: list[tuple[np.ndarray, np.ndarray, float]]) -> np.ndarray:
    """The L-BFGS inverse-Hessian approximation of the last steps times ``grad``."""
    q = grad.copy()
    coefficients = []
    for s, y, sy in reversed(steps):
        a = float(s @ q) / sy
        coefficients.append(a)
        q -= a * y
    if steps:
        s, y, sy = steps[-1]
        q *= sy / float(y @ y)
    for (s, y, sy), a in zip(steps, reversed(coefficients)):
        b = float(y @ q) / sy
        q += (a - b) * s
    return q


def warm_start(data: TrainingSet, previous: CRFWeights, rows: np.ndarray | None = None) -> np.ndarray:
    """Initial weights for ``data`` from a previous model: known (attribute, label) pairs and transitions keep
    their weights, features the previous model did not have start at zero.

    ``rows``, when given, maps a vocabulary id of the training set's features to the row of ``previous``
    holding that attribute (``len(previous.attributes)`` or more where none does; ids past its end are new):
    the previous model's attributes are then not looked up by name."""
    _, old_cols, at_rows, at_cols, known = _previous_features(data, previous, rows)
    state = np.zeros(at_rows.shape[0])
    state[known] = previous.state[at_rows[known], at_cols[known]]
    n_labels = len(data.labels)
    transition = np.zeros((n_labels, n_labels))
    kept = old_cols >= 0
    transition[np.ix_(kept, kept)] = previous.transition[np.ix_(old_cols[kept], old_cols[kept])]
    return np.concatenate([state, transition.ravel()])


def _previous_features(data: TrainingSet, previous: CRFWeights, rows: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Where ``data``'s attributes, labels and features are in ``previous``: the row of each attribute and the
    column of each label (-1 where none), the row and column of each feature, and which features it has."""
    old_rows = _previous_rows(data, previous, rows)
    col_of = {lab: i for i, lab in enumerate(previous.labels)}
    old_cols = np.array([col_of.get(lab, -1) for lab in data.labels], dtype=np.int64)
    at_rows, at_cols = old_rows[data.feature_rows], old_cols[data.feature_cols]
    return old_rows, old_cols, at_rows, at_cols, (at_rows >= 0) & (at_cols >= 0)


def _previous_rows(data: TrainingSet, previous: CRFWeights, rows: np.ndarray | None) -> np.ndarray:
    """The row of ``previous`` holding each attribute of ``data`` (-1 where none does); ``rows`` as in
    :func:`warm_start`."""
    n_old = len(previous.attributes)
    if rows is None:
        row_of = {a: i for i, a in enumerate(previous.attributes)}
        old_rows = np.fromiter((row_of.get(a, -1) for a in data.attributes), dtype=np.int64,
                               count=len(data.attributes))
    else:
        ids = data.vocabulary_ids
        old_rows = np.full(ids.shape[0], -1, dtype=np.int64)
        inside = ids < rows.shape[0]
        found = rows[ids[inside]].astype(np.int64)
        old_rows[inside] = np.where(found < n_old, found, -1)
    return old_rows


def columns_losing_weights(data: TrainingSet, previous: CRFWeights, rows: np.ndarray | None = None) -> np.ndarray:
    """The columns of ``data`` (attributes) that ``previous`` weighs for a label with which they are no feature
    of ``data``: :func:`warm_start` drops those weights, so tokens holding one of these attributes score otherwise
    from its weights than under ``previous`` (``rows`` as in :func:`warm_start`)."""
    old_rows, _, at_rows, at_cols, known = _previous_features(data, previous, rows)
    state = np.asarray(previous.state)
    carried = np.bincount(at_rows[known], weights=state[at_rows[known], at_cols[known]] != 0,
                          minlength=state.shape[0])
    losing = np.count_nonzero(state, axis=1) > carried
    return np.flatnonzero((old_rows >= 0) & losing[np.maximum(old_rows, 0)])


def model_expectations(
    data: TrainingSet, model: CRFWeights, rows: np.ndarray | None = None, *, dtype: type = np.float32,
    threads: int = 1,
) -> Expectations | None:
    """The :class:`Expectations` of ``data``'s documents under ``model``'s own weights — all of them, also the
    (attribute, label) pairs that are no feature of ``data`` — or None when ``data`` has other labels than the
    model (``rows`` as in :func:`warm_start`). What :func:`known_start` adds up."""
    if list(data.labels) != list(model.labels):
        return None
    old_rows = _previous_rows(data, model, rows)
    state = np.zeros((old_rows.shape[0], len(model.labels)), dtype=dtype)
    known = old_rows >= 0
    state[known] = model.state[old_rows[known]]
    return _expectations(data, state, np.asarray(model.transition), dtype, threads)


def feature_expectations(
    part: TrainingSet, data: TrainingSet, w: np.ndarray, *, dtype: type = np.float32, threads: int = 1,
) -> Expectations | None:
    """The :class:`Expectations` of ``part``'s documents (some of ``data``'s) at the weights ``w`` of ``data``'s
    features; None when ``part`` has other labels than ``data``."""
    if list(part.labels) != list(data.labels):
        return None
    n_state = int(data.feature_rows.shape[0])
    # Each of data's attributes' column in part (-1 where part lacks it); part's attributes are data's.
    column = _positions(data.vocabulary_ids, part.vocabulary_ids)
    if np.count_nonzero(column >= 0) != part.vocabulary_ids.shape[0]:
        raise ValueError("part has attributes that data does not")
    rows = column[data.feature_rows]
    has = rows >= 0
    state = np.zeros((part.vocabulary_ids.shape[0], len(data.labels)), dtype=dtype)
    state[rows[has], data.feature_cols[has]] = w[:n_state][has]
    return _expectations(part, state, w[n_state:].reshape(len(data.labels), -1), dtype, threads)


def _expectations(data: TrainingSet, state: np.ndarray, transition: np.ndarray, dtype: type,
                  threads: int) -> Expectations:
    objective = Objective(data, 0.0, dtype, threads=threads)  # expectations do not depend on c2
    try:
        return objective.expectations(state, transition)
    finally:
        objective.close()


def known_start(
    data: TrainingSet, w: np.ndarray, c2: float, parts: Sequence[tuple[float, Expectations]],
) -> tuple[float, np.ndarray] | None:
    """The smooth part of the objective on ``data`` (``NLL + c2 ||w||^2``) and its gradient at ``w``, from
    :class:`Expectations` known over its documents, each part added with its sign (+1 or -1): typically those
    of an earlier fit's documents, less those of them that changed since, plus the changed and new documents.
    The parts must be taken at weights that give every document's tokens the label scores ``w`` gives them.
    The same as :class:`Objective` at ``w`` up to rounding (its sums are taken in another order); None when a
    part has other labels than ``data``."""
    labels = list(data.labels)
    if any(part.labels != labels for _, part in parts):
        return None
    n_labels, n_state = len(labels), int(data.feature_rows.shape[0])
    expected = np.zeros(n_state)
    transitions = np.zeros((n_labels, n_labels))
    log_z = 0.0
    for sign, part in parts:
        rows = _positions(data.vocabulary_ids, part.vocabulary_ids)[data.feature_rows]  # -1: the part lacks it
        has = rows >= 0
        expected[has] += sign * part.counts[rows[has], data.feature_cols[has]]
        transitions += sign * part.transitions
        log_z += sign * part.log_z
    transition = w[n_state:].reshape(n_labels, n_labels)
    gold = float(w[:n_state] @ data.observed) + float((transition * data.observed_transitions).sum())
    value = log_z - gold + c2 * float(w @ w)
    grad = np.concatenate([expected - data.observed, (transitions - data.observed_transitions).ravel()])
    grad += 2.0 * c2 * w
    return value, grad


def _positions(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """The index in ``sorted_values`` (ascending, each once) of each of ``values``; -1 where it is not there."""
    if not sorted_values.shape[0]:
        return np.full(values.shape[0], -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_values, values), sorted_values.shape[0] - 1)
    return np.where(sorted_values[at] == values, at, -1)


def carried_steps(data: TrainingSet, curvature: Curvature) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The steps of ``curvature`` (an earlier fit's) laid out on the features of ``data``: a feature that fit
    did not have takes no part in them (zero), one that ``data`` lacks is left out; with each step its
    ``s . y``, the steps where that is no longer positive left out."""
    labels = list(dict.fromkeys([*data.labels, *curvature.labels]))
    n_labels, n_old = len(labels), len(curvature.labels)
    # The earlier keys in this fit's numbering of the labels (its own labels come first, in its order).
    column = np.array([labels.index(lab) for lab in curvature.labels], dtype=np.int64)
    old_keys = (curvature.keys // n_old) * n_labels + column[curvature.keys % n_old]
    # Sorted already (features are by attribute, then by label, and the earlier labels keep their order here)
    # unless one of the earlier fit's labels is gone from this one's: it is numbered after them.
    order = None if np.all(old_keys[1:] > old_keys[:-1]) else np.argsort(old_keys)
    sorted_keys = old_keys if order is None else old_keys[order]
    at = _positions(data.vocabulary_ids[data.feature_rows] * n_labels + data.feature_cols, sorted_keys)
    found = np.flatnonzero(at >= 0)
    source = at[found] if order is None else order[at[found]]
    n_state, new_labels = int(data.feature_rows.shape[0]), len(data.labels)
    old_in_new = column < new_labels
    pairs = np.ix_(column[old_in_new], column[old_in_new])
    carried = []
    for s_old, y_old in curvature.steps:
        laid = []
        for old in (s_old, y_old):
            new = np.zeros(data.n_features)
            new[found] = old[source]
            new[n_state:].reshape(new_labels, new_labels)[pairs] = (
                old[-n_old * n_old:].reshape(n_old, n_old)[np.ix_(old_in_new, old_in_new)])
            laid.append(new)
        sy = float(laid[0] @ laid[1])
        if sy > 0:
            carried.append((laid[0], laid[1], sy))
    return carried
