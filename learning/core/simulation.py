"""Replay pool-based active learning on a fully annotated corpus, with the gold standard as oracle.

The protocol is the published studies' (ALGORITHMS.md §1). For every run r, a generator seeded by
(seed, r) draws the initial random batch, the same for every strategy. Then, ``iterations`` times: train a
fresh tagger on the labelled documents, evaluate it on the evaluation documents, score the pool with the
strategy on the tagger's marginals and move the ``batch`` best documents to the labelled set. A final
model is trained and evaluated on the last labelled set, so a curve has ``iterations + 1`` points, from
``initial`` to ``initial + iterations * batch`` documents (fewer if the pool runs out).

Reproducibility: tie-breaking (and Random's draws) use a generator seeded by (seed, run, strategy name),
so a strategy's curve does not depend on which other strategies run beside it. The first model of a run
is trained once and shared by all strategies, because they all start from the same documents.

Summaries per strategy come from the mean curve over runs: the area under the learning curve (F1 against
documents, trapezoid rule, divided by the documents range so that it reads as an average F1) and the
documents needed to reach F1 0.8, 0.85 and 0.9 (the first measured point at or above, no interpolation;
``None`` when never reached). Standard deviations are sample deviations (ddof 1; 0 for a single run).
"""
from __future__ import annotations

import copy

import sys
import time
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from corpus.bio import OUTSIDE
from learning.core.metrics import evaluate
from learning.core.ordering import select, select_random
from learning.core.strategies import Strategy, get_strategy
from corpus.text import tokenize
from corpus.types import Document

__all__ = ["DOCS_TO_TARGETS", "aulc", "docs_to", "plot_results", "simulate"]

DOCS_TO_TARGETS = (0.8, 0.85, 0.9)


def aulc(docs: Sequence[float], f1: Sequence[float]) -> float:
    """Area under the F1-against-documents curve (trapezoid), divided by the documents range."""
    x = np.asarray(docs, dtype=np.float64)
    y = np.asarray(f1, dtype=np.float64)
    if x.size == 0:
        return 0.0
    if x.size == 1 or x[-1] == x[0]:
        return float(y.mean())
    area = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))
    return area / float(x[-1] - x[0])


def docs_to(docs: Sequence[int], f1: Sequence[float], target: float) -> int | None:
    """The fewest documents at which the curve reaches ``target`` (``None`` if it never does)."""
    for n, value in zip(docs, f1):
        if value >= target:
            return int(n)
    return None


def _rng_for(seed: int, run: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, run, zlib.crc32(name.encode("utf-8"))])


def _as_strategy(strategy: str | Strategy) -> Strategy:
    return strategy if isinstance(strategy, Strategy) else get_strategy(strategy)


def _point(
    tagger: Any, eval_docs: Sequence[Document], eval_tokens: list, n_docs: int
) -> dict[str, Any]:
    scores = evaluate(eval_docs, tagger.predict(eval_docs), eval_tokens)
    return {
        "docs": n_docs,
        "precision": scores["entity"]["p"],
        "recall": scores["entity"]["r"],
        "f1": scores["entity"]["f1"],
        "per_type_f1": {label: s["f1"] for label, s in scores["per_type"].items()},
    }


def _pool_scores(tagger: Any, strategy: Strategy, pool_docs: Sequence[Document]) -> np.ndarray:
    if strategy.kind == "random":
        # Random needs no model output: equal scores make select() draw uniformly.
        return np.zeros(len(pool_docs))
    marginals = tagger.predict_marginals(pool_docs)
    return strategy.score_many(marginals, list(tagger.labels_).index(OUTSIDE))


def _summarise(
    points_per_run: list[list[dict[str, Any]]], orders: list[list[int]], type_names: list[str]
) -> dict[str, Any]:
    docs = [p["docs"] for p in points_per_run[0]]
    f1 = np.array([[p["f1"] for p in run] for run in points_per_run])
    precision = np.array([[p["precision"] for p in run] for run in points_per_run])
    recall = np.array([[p["recall"] for p in run] for run in points_per_run])
    ddof = 1 if f1.shape[0] > 1 else 0
    f1_mean = f1.mean(axis=0)
    per_type = {
        label: np.array([[p["per_type_f1"].get(label, 0.0) for p in run] for run in points_per_run])
        .mean(axis=0)
        .tolist()
        for label in type_names
    }
    return {
        "docs": docs,
        "f1_mean": f1_mean.tolist(),
        "f1_sd": f1.std(axis=0, ddof=ddof).tolist(),
        "precision_mean": precision.mean(axis=0).tolist(),
        "recall_mean": recall.mean(axis=0).tolist(),
        "per_type_f1": per_type,
        "aulc": aulc(docs, f1_mean),
        "docs_to": {f"{t:g}": docs_to(docs, f1_mean, t) for t in DOCS_TO_TARGETS},
        "final": {
            "docs": docs[-1],
            "f1": float(f1_mean[-1]),
            "precision": float(precision.mean(axis=0)[-1]),
            "recall": float(recall.mean(axis=0)[-1]),
        },
        "runs": {
            "f1": f1.tolist(),
            "precision": precision.tolist(),
            "recall": recall.tolist(),
            "selected": orders,
        },
    }


def _refit(tagger: Any, tagger_factory: Callable[[], Any], docs: Sequence[Document]) -> Any:
    """The next round's model: as the live loop makes it, continuing from ``tagger`` when the tagger starts
    warm (a copy: the first model is shared by every strategy), fitted from zero otherwise — and when the
    tagger's refit policy asks for a cold fit, which the live loop runs beside the loop and continues from at
    the next retrain (here one round sooner: a simulation waits for no one)."""
    due = getattr(tagger, "cold_fit_due", None)
    if not getattr(tagger, "warm_start", False) or (due is not None and due(len(docs))):
        return tagger_factory().fit(docs)
    copy_to_continue = getattr(tagger, "copy_to_continue", None)
    if copy_to_continue is not None:  # as the process that fitted it continues it, with all it keeps there
        return copy_to_continue().fit(docs)
    following = copy.copy(tagger)
    following.feature_cache = tagger.feature_cache  # a copy drops the process cache with the pickled state
    return following.fit(docs)


def simulate(
    train_docs: Sequence[Document],
    eval_docs: Sequence[Document],
    *,
    tagger_factory: Callable[[], Any],
    strategies: Sequence[str | Strategy],
    batch: int,
    initial: int,
    iterations: int,
    runs: int,
    seed: int,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Learning curves of every strategy, averaged over ``runs``.

    ``train_docs`` is the pool (its gold spans are the oracle), ``eval_docs`` the held-out evaluation set,
    ``tagger_factory()`` a fresh unfitted tagger; a tagger made with ``warm_start`` continues from the previous
    round's model, as the live loop's retrains do. ``progress`` receives, after every evaluated model,
    ``{"done", "total", "run", "strategy", "docs", "f1"}``.

    Returns ``{"config": {...}, "strategies": {NAME: {"docs", "f1_mean", "f1_sd", "precision_mean",
    "recall_mean", "per_type_f1", "aulc", "docs_to", "final", "runs"[, "aulc_vs_random"]}},
    "seconds": float}``. ``runs`` holds every run's curves and ``selected``, the pool indices in the order
    they were labelled; ``aulc_vs_random`` (AULC over Random's) appears when Random is among the strategies.
    """
    from tqdm import tqdm

    if batch < 1 or initial < 1 or iterations < 0 or runs < 1:
        raise ValueError("batch, initial and runs must be at least 1 and iterations at least 0")
    if len(train_docs) < initial:
        raise ValueError(f"the pool holds {len(train_docs)} documents, fewer than the initial batch of {initial}")
    chosen = [_as_strategy(s) for s in strategies]
    names = [s.name for s in chosen]
    if len(set(names)) != len(names):
        raise ValueError(f"each strategy may appear once: {names}")
    if not chosen:
        raise ValueError("name at least one strategy")

    started = time.perf_counter()
    eval_tokens = [tokenize(d.text) for d in eval_docs]
    type_names = sorted({s.label for d in eval_docs for s in d.spans})
    steps = min(iterations, -(-(len(train_docs) - initial) // batch))
    total = runs * len(chosen) * (steps + 1)
    done = 0
    curves: dict[str, list[list[dict[str, Any]]]] = {name: [] for name in names}
    orders: dict[str, list[list[int]]] = {name: [] for name in names}
    bar = tqdm(total=total, desc="simulate", unit="model", disable=not sys.stderr.isatty(), leave=False)

    def report(run: int, name: str, point: dict[str, Any]) -> None:
        nonlocal done
        done += 1
        bar.update(1)
        bar.set_postfix(strategy=name, docs=point["docs"], f1=f"{point['f1']:.3f}")
        if progress is not None:
            progress({"done": done, "total": total, "run": run, "strategy": name,
                      "docs": point["docs"], "f1": point["f1"]})

    try:
        for run in range(runs):
            start_set = select_random(len(train_docs), initial, np.random.default_rng([seed, run])).tolist()
            first_tagger = tagger_factory().fit([train_docs[i] for i in start_set])
            first_point = _point(first_tagger, eval_docs, eval_tokens, len(start_set))
            for strategy in chosen:
                rng = _rng_for(seed, run, strategy.name)
                labelled = list(start_set)
                in_labelled = set(labelled)
                pool = [i for i in range(len(train_docs)) if i not in in_labelled]
                tagger, point = first_tagger, first_point
                points = [point]
                report(run, strategy.name, point)
                for _ in range(steps):
                    scores = _pool_scores(tagger, strategy, [train_docs[i] for i in pool])
                    picked = select(scores, batch, rng)
                    labelled.extend(pool[i] for i in picked)
                    taken = set(picked.tolist())
                    pool = [d for k, d in enumerate(pool) if k not in taken]
                    tagger = _refit(tagger, tagger_factory, [train_docs[i] for i in labelled])
                    point = _point(tagger, eval_docs, eval_tokens, len(labelled))
                    points.append(point)
                    report(run, strategy.name, point)
                curves[strategy.name].append(points)
                orders[strategy.name].append([int(i) for i in labelled])
    finally:
        bar.close()

    results = {name: _summarise(curves[name], orders[name], type_names) for name in names}
    random_name = next((s.name for s in chosen if s.kind == "random"), None)
    if random_name is not None:
        reference = results[random_name]["aulc"]
        for name in names:
            results[name]["aulc_vs_random"] = results[name]["aulc"] / reference if reference > 0 else None
    return {
        "config": {
            "strategies": [s.as_dict() for s in chosen],
            "batch": batch,
            "initial": initial,
            "iterations": iterations,
            "runs": runs,
            "seed": seed,
            "train_docs": len(train_docs),
            "eval_docs": len(eval_docs),
        },
        "strategies": results,
        "seconds": time.perf_counter() - started,
    }


def plot_results(results: dict[str, Any], path: str, *, title: str | None = None) -> None:
    """Mean F1 curves with ±1 sd bands, one line per strategy, written to ``path`` (PNG, SVG, PDF…)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name, curve in results["strategies"].items():
            x = np.asarray(curve["docs"])
            mean = np.asarray(curve["f1_mean"])
            sd = np.asarray(curve["f1_sd"])
            (line,) = ax.plot(x, mean, marker="o", markersize=3, label=f"{name} (AULC {curve['aulc']:.3f})")
            ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_xlabel("training documents")
        ax.set_ylabel("entity F1 (evaluation set)")
        config = results.get("config", {})
        ax.set_title(title or f"batch {config.get('batch')}, {config.get('runs')} runs, mean ± sd")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
