"""Linear-chain CRF tagger (crfsuite's model: L-BFGS with L1 ``c1`` and L2 ``c2``), with fast marginals.

A first fit is crfsuite's (sklearn-crfsuite), the reference trainer.  With ``warm_start`` a fitted tagger
fitted again starts from its own weights and minimises the same objective with the project's trainer
(:mod:`learning.core.taggers.crf_lbfgs`), so a retrain after a batch takes a few iterations instead of a
full fit.  Prediction does not go through crfsuite's per-label Python calls: the model's attribute x label
weights and label x label transition weights (read from crfsuite's model file at full precision, or the
trainer's own) times a document's cached token x attribute matrix give every token's label scores, and
:func:`~learning.core.marginals.forward_backward_batch` (marginals) or a batched Viterbi (tags) run over
sentences grouped by length.  Both equal crfsuite's own up to floating-point rounding.
"""
from __future__ import annotations

import pickle
from itertools import chain
from typing import Collection, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from corpus.bio import bio_to_spans, spans_to_bio
from learning.core._compat import crfsuite as crfsuite_compat
from learning.core._compat.crfsuite import CRFModelFormatError, read_crfsuite_weights
from learning.core.features import DEFAULT_CACHE, DocumentFeatures, FeatureCache, FeatureExtractor, get_extractor
from learning.core.lexicon import GoldLexicon, token_spans
from learning.core.marginals import forward_backward_time_major, length_batches
from learning.core.params import Param
from learning.core.taggers.base import BaseTagger, labels_from_tags, training_threads
from learning.core.taggers.crf_lbfgs import (
    CRFWeights, Curvature, Expectations, columns_losing_weights, feature_expectations, fit_weights, known_start,
    model_expectations, training_set_of_runs, warm_start,
)
from corpus.text import Token
from corpus.types import Document, Span

__all__ = ["COLD_REFITS", "CRFTagger", "CRFModelFormatError", "read_crfsuite_weights"]

#: Where a cold fit that the refit policy asks for runs: in :meth:`CRFTagger.fit` itself, or elsewhere.
COLD_REFITS = ("inline", "background")
#: A warm fit starts from prepared expectations (:meth:`CRFTagger.prepare_next_fit`) only when the documents it
#: must pass over again hold at most this share of its tokens.
KNOWN_START_MAX_SHARE = 0.25


class CRFTagger(BaseTagger):
    """CRF over the features of :mod:`learning.core.features`, trained on the sentences of gold documents.

    Parameters are crfsuite's L-BFGS settings (``c1`` L1, ``c2`` L2, ``max_iterations``, ``epsilon``,
    ``all_possible_transitions``), ``gold_lexicon`` (:mod:`learning.core.lexicon`: strings annotated as PHI in
    the training documents marked wherever they occur, a lexicon made again at every fit — extended with the
    new documents when the last fit in this process marked the others (:class:`MarkedGold`) — and kept as
    ``lexicon_``), the project's ``gazetteers`` (name -> entries), the ``vocabulary_scope`` of its features
    (the live loop's project: its documents' vocabulary is kept apart and shared between processes, see
    :class:`~learning.core.features.FeatureCache`) and the ``feature_cache`` shared by every tagger of the
    process (documents are featurized once; the lexicon's marks are added to a copy).

    With ``warm_start``, fitting a tagger that is already fitted continues from its weights for at most
    ``warm_iterations`` iterations of the project's trainer.  So that the model never drifts far from what
    a cold fit would give, the refit policy fits from zero with crfsuite instead when there is no model
    yet, after ``refit_every`` warm fits in a row, or once the documents have grown by more than
    ``refit_growth`` (a share) since the last cold fit. When they have grown that much since the *previous
    fit* (many annotators at once), the warm fit runs four times as many iterations — a cold fit of
    hundreds of records would hold the loop for a minute. Growth is counted from the previous fit, not the
    last cold one, so that a tiny first model (5 records) does not make every later warm fit four times as
    long until the next cold fit.  With
    ``cold_refit="background"`` (the live loop's) the fit itself stays warm when a cold fit is due: the
    caller sees :meth:`cold_fit_due`, has a fresh tagger fitted cold away from the loop's path, and the next
    warm fit continues from that one (its counters start again from the cold fit).  The
    defaults were chosen on MEDDOCAN dev (entity F1 0.957-0.958 for c1 in 0.02-0.1, c2 in 0.01-0.1; with
    c1=0.1, c2=0.05: 30 iterations 0.957, 50 iterations 0.960, 100 iterations 0.958 in twice the time of 50,
    which is what a retrain waits for). Three warm iterations a batch: after 20 batches of 5 on 400 MEDDOCAN
    train records, entity F1 on dev 0.9581 against 0.9593 for a cold fit on the same records, in 4 passes
    over them a fit (median 3.2 s); four iterations 0.9586 in 5 passes (4.5 s); earlier, four iterations
    reached the cold fit's objective (3094 against 3096), and five went lower (3050) for no gain in F1. A warm
    fit that follows another in the same process starts from the curvature that one learnt (its L-BFGS steps,
    :class:`~learning.core.taggers.crf_lbfgs.Curvature`, kept in the process, not saved) and takes one iteration
    fewer: on the same 20 batches, F1 0.9590 and 0.9610 in two runs, against 0.9572 and 0.9580 for three
    iterations without it, in 3 passes a fit instead of 4-5. A process with time to spare after a fit (a
    worker while annotators work) can also compute that fit's documents' share of the next fit's first pass
    (:meth:`prepare_next_fit`): the next warm fit in the process then passes over only the documents that came
    or that the lexicon marks anew, and its first value and gradient are put together from both
    (:func:`~learning.core.taggers.crf_lbfgs.known_start`), one pass of three fewer.

    Fitted attributes: ``labels_`` (BIO labels, 'O' first, only labels seen in training), ``crf_`` (the
    sklearn-crfsuite model of a fit from zero, None after a warm fit; only the ``*_reference`` methods use it),
    ``attributes_`` (the model's attribute strings by id), ``state_weights_`` (attributes x labels) and
    ``transition_weights_`` (labels x labels, from row to column).
    """

    PARAMETERS = (
        Param("c1", float, 0.1, "L1 regularisation: higher keeps fewer features (0.02-0.1 did best on MEDDOCAN)",
              minimum=0.0, maximum=10.0, title="c1 (L1 penalty)"),
        Param("c2", float, 0.05, "L2 regularisation: higher keeps the weights smaller (0.01-0.1 did best)",
              minimum=0.0, maximum=10.0, title="c2 (L2 penalty)"),
        Param("max_iterations", int, 50, "L-BFGS iterations of a full fit; 100 takes twice as long for no gain",
              minimum=1, maximum=1000),
        Param("epsilon", float, 1e-5, "a full fit stops once the objective improves by less than this share",
              minimum=1e-10, maximum=0.1),
        Param("all_possible_transitions", bool, True,
              "also weigh label transitions never seen in training (such as O → I-NAME)"),
        Param("gold_lexicon", bool, True,
              "mark strings already annotated as PHI in the gold wherever they come back (a feature, rebuilt at "
              "every fit)"),
    )
    # The gazetteers and the vocabulary's scope come from the project; the rest is the live loop's refit policy
    # and cache.
    INTERNAL_PARAMETERS = frozenset({
        "gazetteers", "vocabulary_scope", "feature_cache", "warm_start", "warm_iterations", "refit_every",
        "refit_growth", "cold_refit",
    })

    def __init__(
        self,
        c1: float = 0.1,
        c2: float = 0.05,
        max_iterations: int = 50,
        epsilon: float = 1e-5,
        all_possible_transitions: bool = True,
        gold_lexicon: bool = True,
        gazetteers: Mapping[str, Collection[str]] | None = None,
        vocabulary_scope: str | None = None,
        feature_cache: FeatureCache | None = None,
        warm_start: bool = False,
        warm_iterations: int = 3,
        refit_every: int = 20,
        refit_growth: float = 0.5,
        cold_refit: str = "inline",
    ) -> None:
        if cold_refit not in COLD_REFITS:
            raise ValueError(f"cold_refit must be one of {', '.join(COLD_REFITS)}, not {cold_refit!r}")
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.epsilon = epsilon
        self.all_possible_transitions = all_possible_transitions
        self.gold_lexicon = gold_lexicon
        self.gazetteers = gazetteers
        self.vocabulary_scope = vocabulary_scope
        self.feature_cache = feature_cache
        self.warm_start = warm_start
        self.warm_iterations = warm_iterations
        self.refit_every = refit_every
        self.refit_growth = refit_growth
        self.cold_refit = cold_refit

    # Features -------------------------------------------------------------------------------------------
    def _extractor(self) -> FeatureExtractor:
        return get_extractor(self.gazetteers, self.vocabulary_scope)

    def _cached_features(self, docs: Sequence[Document], *, keep: bool = False) -> list[DocumentFeatures]:
        """The (cached) features of ``docs``; ``keep`` them from eviction by scoring (training documents)."""
        cache = self.feature_cache if self.feature_cache is not None else DEFAULT_CACHE
        extractor = self._extractor()
        return cache.get_many(extractor, [doc.text for doc in docs], keep=keep)

    def features(self, docs: Sequence[Document]) -> list[DocumentFeatures]:
        """The features the model reads: the cached ones, with the gold lexicon's marks when it has one."""
        feats = self._cached_features(docs)
        marks = self._lexicon_marks(feats)
        if marks is None:
            return feats
        return [f.with_attributes(marked) for f, marked in zip(feats, marks)]

    def tokens(self, docs: Sequence[Document]) -> list[list[Token]]:
        """The tokens of each document, from its cached features (no second tokenization)."""
        return [f.tokens for f in self._cached_features(docs)]

    def _training_features(
        self, docs: Sequence[Document],
    ) -> tuple[list[DocumentFeatures], GoldLexicon | None, list[list[tuple[int, int, str]]]]:
        """The training documents' features, with ``gold_lexicon`` the lexicon of the gold documents' spans,
        each document marked by the lexicon of the others, and each document's spans as runs of its tokens
        (:func:`~learning.core.lexicon.token_spans`). Machine-labelled documents (``meta["silver"]``, from
        self-training) are marked but add nothing to the lexicon.

        Gold documents that the fit before this one, in this process, marked too (same text, same spans) keep
        their marks unless the new documents change them (:class:`MarkedGold`): the lexicon is extended with
        the new documents only, and only the documents it now matches otherwise are marked again."""
        feats = self._cached_features(docs, keep=True)
        if not self.gold_lexicon:
            return feats, None, [token_spans(f.tokens, doc.spans) for doc, f in zip(docs, feats)]
        silver = any(doc.meta.get("silver") for doc in docs)
        kept = None if silver else getattr(self, "_marked", None)
        marked = kept.extended(docs, feats) if kept is not None else None
        # What a warm fit needs to start from the expectations prepared for the documents of ``kept``.
        self._extended = None if marked is None else (kept, marked)
        if marked is None:
            marked = MarkedGold.made(docs, feats)
        # With silver the lexicon's documents are not the fit's (silver adds nothing): it is not extended later.
        self._marked = None if silver else marked
        return list(marked.features), marked.lexicon.without_documents(), list(marked.runs)

    # Training -------------------------------------------------------------------------------------------
    def fit(self, docs: Sequence[Document]) -> "CRFTagger":
        if len(docs) == 0:
            raise ValueError("cannot fit a CRF on no documents")
        feats, lexicon, runs = self._training_features(docs)
        if self.fits_warm(len(docs)):
            self._fit_warm(feats, runs)
            self.warm_fits_, self.fit_kind_ = getattr(self, "warm_fits_", 0) + 1, "warm"
        else:
            self._fit_crfsuite(docs, feats)
            self.warm_fits_, self.cold_documents_, self.fit_kind_ = 0, len(docs), "cold"
            self.fit_prepared_ = False
        self._prepared = self._extended = None  # prepared for the weights this fit replaced
        self.lexicon_ = lexicon
        self.fitted_documents_ = len(docs)
        return self

    def fits_warm(self, n_documents: int) -> bool:
        """Whether fitting on ``n_documents`` now continues from the current weights (the refit policy)."""
        if not self.warm_start or not hasattr(self, "state_weights_"):
            return False
        return self.cold_refit == "background" or getattr(self, "warm_fits_", 0) < self.refit_every

    def cold_fit_due(self, n_documents: int) -> bool:
        """Whether the refit policy asks for a cold fit by now: ``refit_every`` warm fits in a row, or the
        documents grown by more than ``refit_growth`` since the last cold fit. With ``cold_refit="inline"``
        the next :meth:`fit` does it; with ``"background"`` it is the caller's to run elsewhere."""
        if not self.warm_start or not hasattr(self, "state_weights_"):
            return False
        return getattr(self, "warm_fits_", 0) >= self.refit_every or self._grown(n_documents)

    def _grown(self, n_documents: int) -> bool:
        return n_documents > getattr(self, "cold_documents_", 0) * (1.0 + self.refit_growth)

    def _warm_iterations(self, n_documents: int) -> int:
        previous = getattr(self, "fitted_documents_", getattr(self, "cold_documents_", 0))
        burst = n_documents > previous * (1.0 + self.refit_growth)
        if burst:
            return 4 * self.warm_iterations
        return max(1, self.warm_iterations - (getattr(self, "_curvature", None) is not None))

    def _carried_curvature(self, vocabulary) -> Curvature | None:
        """The curvature the last warm fit learnt, when it was made here, on the features of ``vocabulary``
        (the vocabulary ids that name its features are this process's); else None, and forgotten."""
        kept = getattr(self, "_curvature", None)
        if kept is not None and kept[0] is not vocabulary:
            self._curvature = kept = None
        return None if kept is None else kept[1]

    def _fit_warm(self, feats: list[DocumentFeatures], runs: list[list[tuple[int, int, str]]]) -> None:
        """Continue from the current weights on the documents of ``feats``, their gold spans as token ``runs``
        (which may add attributes and labels)."""
        if not any(f.sentences for f in feats):
            raise ValueError("cannot fit a CRF on documents without tokens")
        data = training_set_of_runs(feats, runs, self.labels_)
        curvature = self._carried_curvature(feats[0].vocabulary)
        previous = CRFWeights(self.attributes_, self.labels_, self.state_weights_, self.transition_weights_)
        # The rows of the current model by vocabulary id (kept when this process has scored with it, else
        # made by interning its attributes, far fewer than the training set's): no attribute looked up by name.
        rows = self._vocabulary_rows(self._extractor())[1]
        init = warm_start(data, previous, rows)
        # The first value and gradient, when prepared, are put together while the objective is set up.
        weights = fit_weights(data, c1=self.c1, c2=self.c2, max_iterations=self._warm_iterations(len(feats)),
                              epsilon=self.epsilon, init=init,
                              step_scale=getattr(self, "step_scale_", None), curvature=curvature,
                              threads=training_threads(), start=lambda: self._known_start(data, init, previous, rows))
        self.crf_ = None
        self.attributes_ = weights.attributes
        self.labels_ = weights.labels
        self.state_weights_ = weights.state
        self.transition_weights_ = weights.transition
        self.fit_iterations_ = weights.iterations
        self.fit_evaluations_ = weights.evaluations
        self.fit_gradients_ = weights.gradients
        self.fit_carried_steps_ = weights.carried_steps
        self.fit_prepared_ = weights.known_start
        self.step_scale_ = weights.step_scale
        self._curvature = (feats[0].vocabulary, weights.curvature)
        # Its rows by vocabulary id are known from the fit: scoring in this process starts without looking
        # the attributes up (see _prediction_tables).
        vocab = feats[0].vocabulary
        rows = np.full(len(vocab), len(weights.attributes), dtype=np.int32)
        rows[weights.vocabulary_ids] = np.arange(len(weights.attributes), dtype=np.int32)
        self._vocab_rows = (vocab, rows, self.attributes_, {})

    def prepare_next_fit(self, threads: int | None = None) -> bool:
        """Compute what the objective sums over this model's training documents at its weights
        (:class:`~learning.core.taggers.crf_lbfgs.Expectations`), for the next warm fit in this process to start
        from; for a process with time to spare (a worker between retrains), on ``threads`` threads (None: the
        training threads). Returns whether it did: only a model fitted here with the gold lexicon, whose marked
        documents this process keeps, can. The result (about 50 MB on 500 MEDDOCAN records) is kept until the
        next fit and never saved."""
        marked = getattr(self, "_marked", None)
        prepared = getattr(self, "_prepared", None)
        if (marked is None or not marked.features or not self.warm_start or not hasattr(self, "state_weights_")
                or (prepared is not None and prepared[0] is marked)):
            return False
        weights = self.state_weights_
        model = CRFWeights(self.attributes_, self.labels_, weights, self.transition_weights_)
        # The rows by vocabulary id only when kept already: making them interns the model's attributes in the
        # process's vocabulary, which a task may be extending meanwhile. Without them attributes go by name.
        cached = getattr(self, "_vocab_rows", None)
        rows = (cached[1] if cached is not None and cached[0] is marked.vocabulary and cached[2] is self.attributes_
                else None)
        expectations = model_expectations(training_set_of_runs(marked.features, marked.runs, self.labels_), model,
                                          rows, threads=threads or training_threads())
        if expectations is None:
            return False
        self._prepared = (marked, weights, expectations)
        return True

    def _known_start(self, data, init: np.ndarray, previous: CRFWeights,
                     rows: np.ndarray) -> tuple[float, np.ndarray] | None:
        """The first value and gradient of a warm fit on ``data`` from ``init``, when :meth:`prepare_next_fit`
        prepared them for the documents of the last fit here at the current weights and this fit's documents
        were marked by extending those (``_extended``): those expectations, less those of the earlier documents
        that changed, plus those of the changed and new ones at ``init``. An earlier document changed when the
        lexicon marked it anew, or when it holds an attribute that lost a weight (a pair of attribute and label
        that only its former marks had, now no feature of ``data``). None otherwise, or when the labels changed.
        """
        prepared, extended = getattr(self, "_prepared", None), getattr(self, "_extended", None)
        self._prepared = self._extended = None
        if prepared is None or extended is None:
            return None
        before, after = extended
        marked, weights, expectations = prepared
        if marked is not before or weights is not self.state_weights_ or expectations.labels != data.labels:
            return None
        n_state = int(data.feature_rows.shape[0])
        touched = set()
        if np.count_nonzero(init[:n_state]) != np.count_nonzero(weights):
            # The documents holding an attribute that lost a weight: data's tokens are theirs, back to back.
            losing = np.zeros(data.matrix.shape[1], dtype=bool)
            losing[columns_losing_weights(data, previous, rows)] = True
            tokens = np.searchsorted(data.matrix.indptr, np.flatnonzero(losing[data.matrix.indices]), side="right")
            starts = np.cumsum([f.n_tokens for f in after.features])
            touched = set(np.searchsorted(starts, tokens - 1, side="right").tolist())
        source = {after.index[key]: k for key, k in before.index.items()}  # this fit's index -> the earlier one
        came = [i for i in range(len(after.features))
                if i not in source or after.features[i] is not before.features[source[i]] or i in touched]
        changed = [source[i] for i in came if i in source]
        # Changed documents are passed over twice (as they were, as they are): past a share of the tokens, the
        # fit's own first pass is cheaper.
        if sum(after.features[i].n_tokens for i in came) > KNOWN_START_MAX_SHARE * data.matrix.shape[0]:
            return None
        parts: list[tuple[float, Expectations | None]] = [(1.0, expectations)]
        threads = training_threads()
        if changed:
            gone = training_set_of_runs([before.features[k] for k in changed], [before.runs[k] for k in changed],
                                        data.labels)
            parts.append((-1.0, model_expectations(gone, previous, rows, threads=threads)))
        if came:
            new = training_set_of_runs([after.features[i] for i in came], [after.runs[i] for i in came], data.labels)
            parts.append((1.0, feature_expectations(new, data, init, threads=threads)))
        if any(part is None for _, part in parts):
            return None
        return known_start(data, init, self.c2, parts)

    def _fit_crfsuite(self, docs: Sequence[Document], feats: list[DocumentFeatures]) -> None:
        import sklearn_crfsuite

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
        # crfsuite does not say how often it evaluated
        self.step_scale_ = self.fit_evaluations_ = self.fit_gradients_ = self.fit_carried_steps_ = None
        self._curvature = None
        self._read_model(crf)
        self.fit_iterations_ = len(crf.training_log_.iterations) if crf.training_log_ else self.max_iterations
        self.crf_ = crf

    def _read_model(self, crf) -> None:
        info = crfsuite_compat.model_dump(crf)
        crf_labels = [None] * len(info.labels)
        for name, i in info.labels.items():
            crf_labels[int(i)] = name
        attributes = [""] * len(info.attributes)
        for name, i in info.attributes.items():
            attributes[int(i)] = name
        self.labels_ = labels_from_tags([crf_labels])
        column = np.array([self.labels_.index(lab) for lab in crf_labels], dtype=np.int64)
        n_labels = len(self.labels_)

        model = crfsuite_compat.model_file_bytes(crf)
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

    def copy_to_continue(self) -> "CRFTagger":
        """A copy to fit further that shares this tagger's arrays, lists and lexicon: fitting assigns new ones
        and changes none in place, so this tagger stays as it was (a process may be scoring with it). It
        shares the rows of its attributes by vocabulary id too (never changed in place either), which the
        warm start reads, but not the weight tables made from them, and the curvature its fit learnt, which
        the next fit starts from, and what :meth:`prepare_next_fit` prepared for it, which goes to the copy (this
        tagger no longer holds it)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        self.__dict__.pop("_prepared", None)
        cached = getattr(self, "_vocab_rows", None)
        clone._vocab_rows = None if cached is None else (*cached[:3], {})
        return clone

    # crfsuite's own model (``crf_``) is kept pickled and read back on first use.  A live one holds its model
    # in a temporary file (``model*.crfsuite``, words of the training records among its attributes) that only
    # its finaliser removes, and a worker's pool process ends without running finalisers: a process that
    # fits, loads or continues a model keeps none alive, so it leaves no such file behind.  A process that
    # loads a saved model would otherwise also import scikit-learn only to unpickle an unused object.
    # The pickled bytes are part of the tagger's own pickle, so they were checked with it: a saved model's tag
    # (``learning.core.artifacts``) is verified before anything of it is unpickled.
    @property
    def crf_(self):
        state = self.__dict__
        if "_crf_pickled" in state:
            state["_crf"] = pickle.loads(state.pop("_crf_pickled"))
        if "_crf" not in state:
            raise AttributeError("crf_")
        return state["_crf"]

    @crf_.setter
    def crf_(self, value) -> None:
        state = self.__dict__
        state.pop("_crf", None)
        state.pop("_crf_pickled", None)
        if value is None:
            state["_crf"] = None
        else:
            state["_crf_pickled"] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def __getstate__(self) -> dict:
        # Cached features are process-local: a pickled tagger carries its model, not the cache (an
        # unpickled tagger featurizes through the process-wide default cache).
        state = self.__dict__.copy()
        state["_vocab_rows"] = None
        state["feature_cache"] = None
        state["_curvature"] = None
        state["_marked"] = None
        state["_extended"] = None
        state["_prepared"] = None
        if state.get("_crf") is not None:
            state["_crf_pickled"] = pickle.dumps(state.pop("_crf"), protocol=pickle.HIGHEST_PROTOCOL)
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        state.setdefault("vocabulary_scope", None)  # saved before features had a scope
        older = state.pop("crf_", None)  # saved before crfsuite's model travelled pickled
        self.__dict__.update(state)
        if older is not None:
            self.crf_ = older

    # Prediction -----------------------------------------------------------------------------------------
    def _vocabulary_rows(self, extractor: FeatureExtractor) -> tuple:
        """The kept ``(vocabulary, rows, attributes, weights by dtype)``: ``rows`` maps a vocabulary id to the
        model's row of that attribute, ``len(attributes_)`` for every attribute the model does not know.

        Kept until the vocabulary or the model changes (training resets ``_vocab_rows``); a vocabulary that
        has grown since only gets rows for its new attributes, none of which the model knows (the model's
        own attributes were interned first).
        """
        vocab = extractor.vocabulary
        n_attrs = len(self.attributes_)
        cached = getattr(self, "_vocab_rows", None)
        if cached is None or cached[0] is not vocab or cached[2] is not self.attributes_:
            ids = np.fromiter((vocab.intern(a) for a in self.attributes_), dtype=np.int64, count=n_attrs)
            rows = np.full(len(vocab), n_attrs, dtype=np.int32)
            rows[ids] = np.arange(n_attrs, dtype=np.int32)
            cached = (vocab, rows, self.attributes_, {})
        elif cached[1].shape[0] < len(vocab):
            rows = np.full(len(vocab), n_attrs, dtype=np.int32)
            rows[: cached[1].shape[0]] = cached[1]
            cached = (vocab, rows, self.attributes_, cached[3])
        self._vocab_rows = cached
        return cached

    def _prediction_tables(self, extractor: FeatureExtractor, dtype: type) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, weights)``: vocabulary id -> row of ``weights`` (:meth:`_vocabulary_rows`), the model's state
        weights in ``dtype`` with one row of zeros added last, the row of every attribute the model does not
        know."""
        _, rows, _, by_dtype = self._vocabulary_rows(extractor)
        n_attrs = len(self.attributes_)
        weights = by_dtype.get(dtype)
        if weights is None or weights.shape[0] != n_attrs + 1:
            weights = np.zeros((n_attrs + 1, len(self.labels_)), dtype=dtype)
            weights[:n_attrs] = self.state_weights_
            by_dtype[dtype] = weights
        return rows, weights

    def _unary(self, feats: Sequence[DocumentFeatures], dtype: type = np.float64,
               marks: Sequence[Mapping[int, Sequence[str]]] | None = None) -> np.ndarray:
        """Label scores (all tokens of all documents, labels) = token x attribute matrix @ weights, in
        ``dtype``; ``marks`` (per document, token -> attributes: the gold lexicon's) add their weights."""
        n_tokens = sum(f.n_tokens for f in feats)
        n_labels = len(self.labels_)
        if n_tokens == 0:
            return np.zeros((0, n_labels), dtype=dtype)
        extra = _marked_attributes(feats, marks, self._extractor().vocabulary) if marks else None
        rows_of, weights = self._prediction_tables(self._extractor(), dtype)
        # The documents' attribute ids laid back to back, read as model rows (unknown ones as the zero row).
        rows = rows_of.take(np.concatenate([f.indices for f in feats]))
        index = np.int32 if rows.shape[0] < np.iinfo(np.int32).max else np.int64
        indptr = np.empty(n_tokens + 1, dtype=index)
        token, entry = 0, 0
        for f in feats:
            indptr[token : token + f.n_tokens] = f.indptr[:-1] + entry
            token += f.n_tokens
            entry += int(f.indptr[-1])
        indptr[-1] = entry
        matrix = sp.csr_matrix((np.ones(rows.shape[0], dtype=dtype), rows.astype(index, copy=False), indptr),
                               shape=(n_tokens, weights.shape[0]))
        unary = np.asarray(matrix @ weights)
        if extra is not None and extra[0].shape[0]:
            tokens, ids = extra
            marked = sp.csr_matrix((np.ones(ids.shape[0], dtype=dtype), (tokens, rows_of.take(ids))),
                                   shape=(n_tokens, weights.shape[0]))
            unary += marked @ weights
        return unary

    def _lexicon_marks(self, feats: Sequence[DocumentFeatures]) -> list[dict] | None:
        """Per document, the gold lexicon's attributes by token (None without a lexicon)."""
        lexicon = getattr(self, "lexicon_", None)
        if lexicon is None:
            return None
        return [lexicon.attributes(f.lower) for f in feats]

    def predict_marginals(self, docs: Sequence[Document]) -> list[np.ndarray]:
        """Per document, P(label | token) as an array (n_tokens, n_labels) in ``labels_`` order.

        Label scores and forward-backward run in float32 (marginals within ~1e-6 of float64's); the result
        is float64, its rows normalised in float64.
        """
        self._check_fitted()
        feats = self._cached_features(docs)
        starts, lengths = _sentence_layout(feats)
        unary = self._unary(feats, np.float32, self._lexicon_marks(feats))
        marginals = _chain_marginals(unary, starts, lengths, self.transition_weights_)
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
        """The Viterbi labels per token of each document (crfsuite's decoding, batched over sentences)."""
        self._check_fitted()
        feats = self._cached_features(docs)
        starts, lengths = _sentence_layout(feats)
        best = _chain_viterbi(self._unary(feats, marks=self._lexicon_marks(feats)), starts, lengths,
                              self.transition_weights_)
        labels = np.array(self.labels_, dtype=object)
        out = []
        offset = 0
        for f in feats:
            out.append(labels[best[offset : offset + f.n_tokens]].tolist())
            offset += f.n_tokens
        return out

    def predict_tags_reference(self, docs: Sequence[Document]) -> list[list[str]]:
        """crfsuite's own Viterbi labels (slow; a tagger fitted by crfsuite only)."""
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
        return [bio_to_spans(tokens, tags) for tokens, tags in zip(self.tokens(docs), self.predict_tags(docs))]


class MarkedGold:
    """Gold documents marked by the gold lexicon, each by the lexicon of the others, as a fit made them: the
    lexicon (with its documents), and per document its key (text and spans), marks, marked features and spans
    as runs of tokens. Kept in the process that made it, on the tagger it fitted (not saved: its features'
    attribute ids are that process's), so that the next fit on grown gold marks only what the new documents
    change. Never changed once made: a tagger continued from (``copy_to_continue``) shares it."""

    __slots__ = ("vocabulary", "lexicon", "index", "marks", "features", "runs")

    def __init__(self, vocabulary, lexicon: GoldLexicon, keys: list, marks: list[dict],
                 features: list[DocumentFeatures], runs: list[list[tuple[int, int, str]]]) -> None:
        self.vocabulary, self.lexicon = vocabulary, lexicon
        self.index = {key: i for i, key in enumerate(keys)}
        self.marks, self.features, self.runs = marks, features, runs

    @staticmethod
    def key(doc: Document) -> tuple[str, tuple[Span, ...]]:
        return doc.text, tuple(doc.spans)

    @classmethod
    def made(cls, docs: Sequence[Document], feats: Sequence[DocumentFeatures]) -> "MarkedGold":
        """Documents marked from scratch; machine-labelled ones (``meta["silver"]``) are marked by the lexicon of
        all the gold and add nothing to it."""
        runs = [token_spans(f.tokens, doc.spans) for doc, f in zip(docs, feats)]
        gold = [i for i, doc in enumerate(docs) if not doc.meta.get("silver")]
        lexicon = GoldLexicon.from_gold((feats[i].lower, runs[i]) for i in gold)
        place = {i: k for k, i in enumerate(gold)}  # a gold document's index among the lexicon's documents
        marks = [lexicon.attributes(f.lower, exclude=place.get(i)) for i, f in enumerate(feats)]
        return cls(feats[0].vocabulary if feats else None, lexicon, [cls.key(doc) for doc in docs], marks,
                   [f.with_attributes(m) for f, m in zip(feats, marks)], runs)

    def extended(self, docs: Sequence[Document], feats: Sequence[DocumentFeatures]) -> "MarkedGold | None":
        """``docs`` (their cached features ``feats``) marked, when they hold every document marked here,
        unchanged, each once, and their features are of the same vocabulary; else None (mark them anew). The
        same marks as :meth:`made` gives, made from the new documents and those they change."""
        if not feats or feats[0].vocabulary is not self.vocabulary:
            return None
        keys = [self.key(doc) for doc in docs]
        order = [self.index.get(key) for key in keys]
        earlier = [k for k in order if k is not None]
        new_keys = [key for key, k in zip(keys, order) if k is None]
        if (len(earlier) != len(self.index) or len(set(earlier)) != len(earlier)
                or len(set(new_keys)) != len(new_keys)):
            return None
        runs = [self.runs[k] if k is not None else token_spans(f.tokens, doc.spans)
                for k, doc, f in zip(order, docs, feats)]
        added = [None if k is not None else (f.lower, r) for k, f, r in zip(order, feats, runs)]
        lexicon, affected = self.lexicon.extended(order, added)
        marks = [self.marks[k] if k is not None else None for k in order]
        marked = [self.features[k] if k is not None else None for k in order]
        for i in affected:
            now = lexicon.attributes(feats[i].lower, exclude=i)
            if order[i] is None or now != marks[i]:
                marks[i], marked[i] = now, feats[i].with_attributes(now)
        return MarkedGold(self.vocabulary, lexicon, keys, marks, marked, runs)


def _marked_attributes(feats: Sequence[DocumentFeatures], marks: Sequence[Mapping[int, Sequence[str]]],
                       vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """(token, attribute id) of every attribute in ``marks``, tokens counted over ``feats`` laid back to back
    and ids interned in ``vocabulary``."""
    offsets = np.cumsum([0] + [f.n_tokens for f in feats[:-1]]).tolist()
    at = [offset + t for offset, marked in zip(offsets, marks) for t in marked]
    rows = vocabulary.ids_of_each(chain.from_iterable(marked.values() for marked in marks))
    tokens = np.repeat(np.array(at, dtype=np.int64), [len(row) for row in rows])
    ids = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=tokens.shape[0])
    return tokens, ids


def _sentence_layout(feats: Sequence[DocumentFeatures]) -> tuple[np.ndarray, np.ndarray]:
    """Where each sentence of ``feats`` starts among all their tokens laid back to back, and its length."""
    starts: list[int] = []
    lengths: list[int] = []
    offset = 0
    for f in feats:
        for a, b in f.sentences:
            starts.append(offset + a)
            lengths.append(b - a)
        offset += f.n_tokens
    return np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64)


def _chain_viterbi(
    unary: np.ndarray, starts: np.ndarray, lengths: np.ndarray, transition: np.ndarray,
    max_padding: float = 0.25, max_bucket_tokens: int = 2048,
) -> np.ndarray:
    """The best label index of every token of many chains stored back to back in ``unary``.

    Time-major, a batch of chains of similar length at a time; the batches are small so that each step's
    (chain, label, label) candidates stay in the processor's cache. Ties go to the lowest label index, as
    crfsuite's do."""
    best = np.zeros(unary.shape[0], dtype=np.int64)
    n_labels = unary.shape[1]
    into = np.ascontiguousarray(transition.T)  # into[j, i]: the score of moving from label i to label j
    buffer = np.empty((0, n_labels, n_labels))
    for chosen in length_batches(lengths, max_padding, max_bucket_tokens):
        lens = lengths[chosen]
        width = int(lens.max())
        if width == 0:
            continue
        steps = np.arange(width)
        inside = steps[:, None] < lens[None, :]  # (position, chain)
        pos = np.where(inside, starts[chosen][None, :] + steps[:, None], 0)
        scores = unary[pos]  # (position, chain, label)
        n_seq = lens.shape[0]
        if buffer.shape[0] < n_seq:
            buffer = np.empty((n_seq, n_labels, n_labels))
        back = np.zeros((width, n_seq, n_labels), dtype=np.int32)
        delta = scores[0].copy()
        for t in range(1, width):
            candidates = np.add(delta[:, None, :], into, out=buffer[:n_seq])  # (chain, to j, from i)
            came = candidates.argmax(axis=2)
            back[t] = came
            moved = np.take_along_axis(candidates, came[:, :, None], axis=2)[:, :, 0]
            moved += scores[t]
            live = inside[t]
            delta[live] = moved[live]  # finished chains keep their last scores
        path = np.zeros((width, n_seq), dtype=np.int64)
        final = delta.argmax(axis=1)
        current = final
        rows = np.arange(n_seq)
        for t in range(width - 1, -1, -1):
            live = inside[t]
            current = np.where(t == lens - 1, final, current)
            path[t] = np.where(live, current, 0)
            if t > 0:
                current = np.where(live, back[t, rows, current], current)
        best[pos[inside]] = path[inside]
    return best


def _chain_marginals(
    unary: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    transition: np.ndarray,
    max_padding: float = 0.25,
    max_bucket_tokens: int = 32768,
) -> np.ndarray:
    """Marginals (float64, rows normalised) of many chains stored back to back in ``unary``, computed in the
    precision of ``unary``; chains of similar length share a batch."""
    out = np.zeros(unary.shape, dtype=np.float64)
    for chosen in length_batches(lengths, max_padding, max_bucket_tokens):
        lens = lengths[chosen]
        width = int(lens.max())
        if width > 0:
            steps = np.arange(width)
            inside = steps[:, None] < lens[None, :]  # time-major: (position, chain)
            pos = np.where(inside, starts[chosen][None, :] + steps[:, None], 0)
            result = forward_backward_time_major(unary[pos], lens, transition)
            # Written back chain by chain: each chain's tokens are consecutive in ``out``.
            by_chain = inside.T
            out[pos.T[by_chain]] = result.transpose(1, 0, 2)[by_chain]
    if unary.dtype != np.float64:
        out *= np.reciprocal(out @ np.ones(out.shape[1]))[:, None]
    return out
