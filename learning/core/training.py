"""Train a tagger and score it on an evaluation set, with optional self-training and recall bias: the one
pipeline behind the ``evaluate`` command and the live retrain (``learning.services.retrain``).

Self-training needs a development set; it is held out from the training documents (``dev_fraction`` of
them, at least one, drawn by a generator seeded with ``seed``).

The recall bias (ALGORITHMS.md §3) needs documents to tune its thresholds on, named by
``recall_bias_tuning``, and its figures must come from documents the thresholds were not tuned on:

- ``"dev"`` (:data:`TUNE_ON_DEV`, the command line): the thresholds are tuned on the development set held
  out of the training documents, and the tagger trains on the rest (with self-training: the tagger
  self-training returns); the evaluation set is untouched.
- ``"cross-fit"`` (:data:`CROSS_FIT`, the live loop): the tagger trains on all the training documents
  (plus the silver sentences of self-training, if on), the thresholds kept are
  tuned on the evaluation documents, and the figures reported are cross-fitted — the evaluation documents
  are cut into folds and each fold is decoded with thresholds tuned on the other folds, so no document is
  scored with thresholds chosen on itself. With fewer than two evaluation documents no figures are given.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from corpus.types import Document, Span
from learning.core.metrics import evaluate
from learning.core.decoding import decoded_spans
from learning.core.recall_bias import PerLabelRecallBias, RecallBias, tune_recall_bias, tune_recall_bias_per_label
from learning.core.self_training import SelfTrainingResult, self_train
from learning.core.taggers.base import gold_tags

__all__ = [
    "CROSS_FIT", "CROSS_FIT_FOLDS", "TUNE_ON_DEV", "TrainedModel", "cross_fit_recall_bias", "evaluate_model",
    "fit_model", "split_dev", "train_and_evaluate", "tuned_recall_bias",
]

TUNE_ON_DEV = "dev"
CROSS_FIT = "cross-fit"
#: Folds of the evaluation documents for cross-fitted recall-bias figures (fewer when there are fewer documents).
CROSS_FIT_FOLDS = 5


def split_dev(
    docs: Sequence[Document], fraction: float, seed: int
) -> tuple[list[Document], list[Document]]:
    """(train, dev): ``fraction`` of ``docs`` (at least one, never all) drawn at random for dev."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"the development fraction must lie strictly between 0 and 1, got {fraction}")
    if len(docs) < 2:
        raise ValueError("holding out a development set needs at least two training documents")
    n_dev = min(len(docs) - 1, max(1, round(fraction * len(docs))))
    order = np.random.default_rng(seed).permutation(len(docs))
    dev_index = set(order[:n_dev].tolist())
    train = [d for i, d in enumerate(docs) if i not in dev_index]
    dev = [d for i, d in enumerate(docs) if i in dev_index]
    return train, dev


@dataclass
class TrainedModel:
    """A fitted tagger and what the pipeline measured and chose on the way."""

    tagger: Any
    train_documents: list[Document]  # the gold the tagger was fitted on (silver comes on top)
    dev_documents: list[Document]
    train_seconds: float
    self_training: SelfTrainingResult | None = None
    silver: list[Document] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)  # unbiased, on the evaluation documents
    predicted: list[list[Span]] = field(default_factory=list)  # unbiased, on the evaluation documents
    eval_tokens: list = field(default_factory=list)
    recall_bias: RecallBias | PerLabelRecallBias | None = None  # the thresholds to use from now on
    recall_bias_tuning: str = ""
    recall_bias_metrics: dict[str, Any] | None = None  # on documents the thresholds were not tuned on
    predict_seconds: float = 0.0


Beta = float | Mapping[str, float]


def train_and_evaluate(
    train_docs: Sequence[Document],
    eval_docs: Sequence[Document],
    *,
    tagger_factory: Callable[[], Any],
    seed: int = 0,
    recall_bias_beta: Beta | None = None,
    **fitting: Any,
) -> TrainedModel:
    """:func:`fit_model` on ``train_docs`` (``fitting`` holds its other options), then :func:`evaluate_model`
    on ``eval_docs``: the two halves, for a caller that evaluates elsewhere."""
    model = fit_model(train_docs, tagger_factory=tagger_factory, seed=seed, recall_bias_beta=recall_bias_beta,
                      **fitting)
    evaluate_model(model, eval_docs, recall_bias_beta=recall_bias_beta, seed=seed)
    return model


def fit_model(
    train_docs: Sequence[Document],
    *,
    tagger_factory: Callable[[], Any],
    seed: int = 0,
    recall_bias_beta: Beta | None = None,
    recall_bias_tuning: str = TUNE_ON_DEV,
    unlabelled_docs: Sequence[Document] | None = None,
    self_training: Mapping[str, Any] | None = None,
    dev_fraction: float = 0.2,
) -> TrainedModel:
    """Fit ``tagger_factory()`` on ``train_docs`` (and, with ``unlabelled_docs``, silver sentences from them):
    the tagger, its silver and its development set, nothing measured on evaluation documents yet; see the
    module's docstring for ``recall_bias_tuning``.

    ``recall_bias_beta`` is one β, and one pair of thresholds is tuned for every PHI type, or ``{type: β}``,
    and each type it names gets a pair of its own (``learning.core.recall_bias.tune_recall_bias_per_label``).

    ``self_training`` holds keyword arguments of :func:`learning.core.self_training.self_train`
    (``selection``, ``target_precision``, ``target_recall``, ``max_iterations``).
    """
    if recall_bias_tuning not in (TUNE_ON_DEV, CROSS_FIT):
        raise ValueError(f"recall-bias tuning is {TUNE_ON_DEV!r} or {CROSS_FIT!r}, not {recall_bias_tuning!r}")
    tunes_on_dev = recall_bias_beta is not None and recall_bias_tuning == TUNE_ON_DEV
    if tunes_on_dev or unlabelled_docs is not None:
        train, dev = split_dev(train_docs, dev_fraction, seed)
    else:
        train, dev = list(train_docs), []

    started = time.perf_counter()
    outcome = None
    silver: list[Document] = []
    if unlabelled_docs is not None:
        outcome = self_train(train, unlabelled_docs, dev, tagger_factory=tagger_factory, **(self_training or {}))
        silver = list(outcome.silver)
    if recall_bias_tuning == TUNE_ON_DEV:
        # The development set tunes the thresholds (or watched self-training): the tagger has not seen it.
        tagger = outcome.tagger if outcome is not None else tagger_factory().fit(train)
        fitted_on = train
    else:
        # The live loop learns from all its gold; self-training's development set only chose the silver.
        tagger = tagger_factory().fit(list(train_docs) + silver)
        fitted_on = list(train_docs)
    return TrainedModel(tagger=tagger, train_documents=fitted_on, dev_documents=dev,
                        train_seconds=time.perf_counter() - started, self_training=outcome, silver=silver,
                        recall_bias_tuning=recall_bias_tuning if recall_bias_beta is not None else "")


def evaluate_model(
    model: TrainedModel, eval_docs: Sequence[Document], *, recall_bias_beta: Beta | None = None, seed: int = 0,
) -> None:
    """The evaluating half of :func:`train_and_evaluate`: the model's spans and metrics on ``eval_docs``, and
    with ``recall_bias_beta`` its thresholds, tuned and scored as ``model.recall_bias_tuning`` says."""
    started = time.perf_counter()
    tagger = model.tagger
    if eval_docs:
        model.eval_tokens = tagger.tokens(eval_docs)
        model.predicted = tagger.predict(eval_docs)
        model.metrics = evaluate(eval_docs, model.predicted, model.eval_tokens)
    if recall_bias_beta is not None:
        model.recall_bias_tuning = model.recall_bias_tuning or TUNE_ON_DEV
        if model.recall_bias_tuning == TUNE_ON_DEV:
            _tune_on_dev(model, model.dev_documents, eval_docs, recall_bias_beta)
        elif eval_docs:
            _cross_fit(model, eval_docs, recall_bias_beta, seed)
    model.predict_seconds = time.perf_counter() - started


def tuned_recall_bias(tagger: Any, docs: Sequence[Document], beta: Beta) -> RecallBias | PerLabelRecallBias:
    """Thresholds for ``beta`` tuned on all of ``docs`` (the ones cross-fitting keeps), without figures:
    what decoding needs before the model is evaluated."""
    marginals = tagger.predict_marginals(docs)
    tokens = tagger.tokens(docs)
    return _tune(marginals, [gold_tags(d, t) for d, t in zip(docs, tokens)], list(tagger.labels_), beta)


def _tune(marginals, gold, labels, beta: Beta) -> RecallBias | PerLabelRecallBias:
    """Thresholds for one β (one pair) or for a β per type (a pair per type it names)."""
    if isinstance(beta, Mapping):
        return tune_recall_bias_per_label(marginals, gold, labels, beta)
    return tune_recall_bias(marginals, gold, labels, beta)


def _tune_on_dev(model: TrainedModel, dev: Sequence[Document], eval_docs: Sequence[Document], beta: Beta) -> None:
    labels = list(model.tagger.labels_)
    model.recall_bias = _tune(model.tagger.predict_marginals(dev), [gold_tags(d) for d in dev], labels, beta)
    if eval_docs:
        biased = _biased(model.eval_tokens, model.tagger.predict_marginals(eval_docs), labels, model.recall_bias)
        model.recall_bias_metrics = evaluate(eval_docs, biased, model.eval_tokens)


def _cross_fit(model: TrainedModel, eval_docs: Sequence[Document], beta: Beta, seed: int) -> None:
    model.recall_bias, model.recall_bias_metrics = cross_fit_recall_bias(
        eval_docs, model.eval_tokens, model.tagger.predict_marginals(eval_docs), list(model.tagger.labels_), beta,
        seed=seed,
    )


def cross_fit_recall_bias(
    docs: Sequence[Document], tokens: Sequence[Sequence], marginals: Sequence[np.ndarray], labels: Sequence[str],
    beta: Beta, *, seed: int, folds: int = CROSS_FIT_FOLDS,
) -> tuple[RecallBias | PerLabelRecallBias, dict[str, Any] | None]:
    """Thresholds tuned for F_β on all of ``docs``, and the scores of a decoding in which each of ``folds``
    random folds of ``docs`` uses thresholds tuned on the other folds (None for fewer than two documents)."""
    gold = [gold_tags(d, t) for d, t in zip(docs, tokens)]
    chosen = _tune(marginals, gold, labels, beta)
    folds = min(folds, len(docs))
    if folds < 2:
        return chosen, None
    fold_of = np.random.default_rng(seed).permutation(len(docs)) % folds
    biased: list[list[Span]] = [[] for _ in docs]
    for fold in range(folds):
        tuning = np.flatnonzero(fold_of != fold)
        on_others = _tune([marginals[i] for i in tuning], [gold[i] for i in tuning], labels, beta)
        for i in np.flatnonzero(fold_of == fold).tolist():
            biased[i] = _biased([tokens[i]], [marginals[i]], labels, on_others)[0]
    return chosen, evaluate(docs, biased, tokens)


def _biased(tokens, marginals, labels, chosen: RecallBias | PerLabelRecallBias) -> list[list[Span]]:
    return [decoded_spans(t, m, labels, chosen.thresholds) for t, m in zip(tokens, marginals)]
