"""Train a tagger and score it on an evaluation set, with optional self-training and recall bias.

This is the work behind the ``evaluate`` management command, kept here so a Celery task can run the same.

Recall bias and self-training both need a development set. It is held out from the training documents:
``dev_fraction`` of them (20% by default, at least one), drawn by a generator seeded with ``seed``; the
tagger then trains on the rest. Without either option every training document is used for training.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from learning.core.metrics import evaluate
from learning.core.recall_bias import recall_biased_spans, tune_recall_bias
from learning.core.registry import tagger_factory
from learning.core.self_training import self_train
from learning.core.taggers.base import gold_tags
from learning.core.text import tokenize
from learning.core.types import Document

__all__ = ["run_evaluation", "split_dev"]


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


def run_evaluation(
    train_docs: Sequence[Document],
    eval_docs: Sequence[Document],
    *,
    tagger: str,
    tagger_params: dict[str, Any] | None = None,
    seed: int = 0,
    recall_bias_beta: float | None = None,
    unlabelled_docs: Sequence[Document] | None = None,
    dev_fraction: float = 0.2,
) -> dict[str, Any]:
    """Scores of :func:`learning.core.metrics.evaluate` plus timings and what was chosen on the way.

    ``unlabelled_docs`` switches self-training on; ``recall_bias_beta`` tunes (τ_main, τ_alt) for F_β on
    the development set and applies them to the evaluation set.
    """
    factory = tagger_factory(tagger, seed=seed, **(tagger_params or {}))
    needs_dev = recall_bias_beta is not None or unlabelled_docs is not None
    if needs_dev:
        train, dev = split_dev(train_docs, dev_fraction, seed)
    else:
        train, dev = list(train_docs), []
    report: dict[str, Any] = {
        "tagger": tagger,
        "tagger_params": dict(tagger_params or {}),
        "seed": seed,
        "train_docs": len(train),
        "dev_docs": len(dev),
        "eval_docs": len(eval_docs),
    }

    started = time.perf_counter()
    if unlabelled_docs is not None:
        outcome = self_train(train, unlabelled_docs, dev, tagger_factory=factory)
        model = outcome.tagger
        report["self_training"] = {
            "unlabelled_docs": len(unlabelled_docs),
            "silver_sentences": len(outcome.silver),
            "iterations": len(outcome.history) - 1,
            "best_iteration": outcome.best_iteration,
            "stopped": outcome.stopped,
            "dev_f1": [h["dev_f1"] for h in outcome.history],
        }
    else:
        model = factory().fit(train)
    report["train_seconds"] = time.perf_counter() - started

    started = time.perf_counter()
    eval_tokens = [tokenize(d.text) for d in eval_docs]
    if recall_bias_beta is not None:
        labels = list(model.labels_)
        dev_marginals = model.predict_marginals(dev)
        dev_gold = [gold_tags(d) for d in dev]
        chosen = tune_recall_bias(dev_marginals, dev_gold, labels, recall_bias_beta)
        predicted = [
            recall_biased_spans(toks, m, labels, chosen.tau_main, chosen.tau_alt)
            for toks, m in zip(eval_tokens, model.predict_marginals(eval_docs))
        ]
        report["recall_bias"] = {
            "beta": recall_bias_beta,
            "tau_main": chosen.tau_main,
            "tau_alt": chosen.tau_alt,
            "dev_f_beta": chosen.score,
        }
    else:
        predicted = model.predict(eval_docs)
    report["predict_seconds"] = time.perf_counter() - started
    scores = evaluate(eval_docs, predicted, eval_tokens)
    return {**scores, **report}
