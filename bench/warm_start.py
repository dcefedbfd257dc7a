"""Warm-started retraining against crfsuite's cold fit: time and quality, on MEDDOCAN train -> dev.

A CRF (default parameters) is fitted cold by crfsuite on the first ``--start`` training documents, then
``--batches`` batches of ``--batch`` documents arrive one after another and the tagger, made with
``warm_start``, is fitted again after each, as the live loop's retrains do (its refit policy included:
with the defaults, 20 warm fits in a row and 25% more documents stay within it). The reference, measured
in the same run: a cold crfsuite fit on exactly the final documents. Reported: seconds of each warm fit
(median, max) over the cold fit's (``warm_over_cold``), OWL-QN iterations, and the entity F1 on MEDDOCAN dev
of both final models with their difference (``f1_gap``: warm minus cold; the goal is within 0.002), and the
objective values (crfsuite's objective, evaluated by the project's trainer on the final documents) of both.
Before each warm fit the tagger prepares its first pass (``CRFTagger.prepare_next_fit``), as a worker does
while annotators work, timed apart from the fit (``prepare_seconds``, median; ``prepared_fits``: the fits that
started from it); ``--no-prepare`` leaves that out.

``--simulation`` adds a learning-curve comparison: ``learning.core.simulation.simulate`` with the CRF
refitted from zero each round and with it continuing warm, same seeds and strategies (LCUB_6 and Random),
``--sim-pool`` training documents as the pool and ``--sim-eval`` dev documents to evaluate on; reported:
each curve's AULC and final F1, and the seconds each simulation took.

Prints one JSON line. Options: ``--start`` (400), ``--batch`` (5), ``--batches`` (20), ``--simulation``,
``--sim-pool`` (300), ``--sim-eval`` (100), ``--sim-iterations`` (10), ``--no-prepare``, ``--quick`` (start
60, 4 batches, a simulation of 3 rounds on 80 documents).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import numpy as np  # noqa: E402

from corpus.bio import spans_to_bio  # noqa: E402
from learning.core.features import FeatureCache  # noqa: E402
from learning.core.metrics import evaluate  # noqa: E402
from learning.core.taggers.base import labels_from_tags  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402
from learning.core.taggers.crf_lbfgs import CRFWeights, Objective, label_ids, training_set, warm_start  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402


def objective_of(tagger: CRFTagger, docs, cache: FeatureCache) -> float:
    """crfsuite's objective (NLL + c1 |w|_1 + c2 |w|^2) of ``tagger``'s weights on ``docs``, featurized as a fit
    on them featurizes them (each marked by the gold lexicon of the others)."""
    feats = CRFTagger(feature_cache=cache)._training_features(docs)[0]
    tags = [spans_to_bio(f.tokens, d.spans)[0] for d, f in zip(docs, feats)]
    labels = labels_from_tags(tags)
    data = training_set(feats, label_ids(tags, labels), labels)
    w = warm_start(data, CRFWeights(tagger.attributes_, tagger.labels_, tagger.state_weights_,
                                    tagger.transition_weights_))
    value, _ = Objective(data, tagger.c2, dtype=np.float64)(w)
    return round(value + tagger.c1 * float(np.abs(w).sum()), 2)


def entity_f1(tagger: CRFTagger, dev) -> float:
    return round(evaluate(dev, tagger.predict(dev))["entity"]["f1"], 4)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def warm_sequence(train, dev, *, start: int, batch: int, batches: int, prepare: bool = True) -> dict:
    cache = FeatureCache(max_tokens=10_000_000)
    final = train[: start + batch * batches]
    tagger = CRFTagger(feature_cache=cache, warm_start=True)
    began = time.perf_counter()
    tagger.fit(train[:start])
    first_seconds = time.perf_counter() - began
    rounds = []
    for k in range(1, batches + 1):
        docs = train[: start + batch * k]
        tagger.features(docs)  # featurizing belongs to the records' arrival, not to the fit
        began = time.perf_counter()
        # As a worker does while annotators work: not part of the fit.
        prepared = prepare and tagger.prepare_next_fit()
        prepare_seconds = time.perf_counter() - began
        began = time.perf_counter()
        tagger.fit(docs)
        rounds.append({"documents": len(docs), "seconds": round(time.perf_counter() - began, 3),
                       "kind": tagger.fit_kind_, "iterations": tagger.fit_iterations_,
                       "prepared": bool(getattr(tagger, "fit_prepared_", False)),
                       "prepare_seconds": round(prepare_seconds, 3) if prepared else None})
    cold = CRFTagger(feature_cache=cache)
    began = time.perf_counter()
    cold.fit(final)
    cold_seconds = time.perf_counter() - began
    warm_seconds = [r["seconds"] for r in rounds if r["kind"] == "warm"]
    warm_f1, cold_f1 = entity_f1(tagger, dev), entity_f1(cold, dev)
    return {
        "start_documents": start, "batch": batch, "batches": batches, "final_documents": len(final),
        "first_cold_fit_seconds": round(first_seconds, 2),
        "warm_fits": len(warm_seconds), "cold_refits": sum(r["kind"] == "cold" for r in rounds),
        "warm_fit_seconds": {"median": round(statistics.median(warm_seconds), 2) if warm_seconds else None,
                             "max": round(max(warm_seconds), 2) if warm_seconds else None},
        "cold_fit_seconds": round(cold_seconds, 2),
        "warm_over_cold": round(statistics.median(warm_seconds) / cold_seconds, 3) if warm_seconds else None,
        "warm_iterations": sorted({r["iterations"] for r in rounds if r["kind"] == "warm"}),
        "prepared_fits": sum(r["prepared"] for r in rounds),
        "prepare_seconds": _median([r["prepare_seconds"] for r in rounds if r["prepare_seconds"] is not None]),
        "entity_f1": {"warm": warm_f1, "cold": cold_f1}, "f1_gap": round(warm_f1 - cold_f1, 4),
        "meets_f1_goal": abs(warm_f1 - cold_f1) <= 0.002,
        "objective": {"warm": objective_of(tagger, final, cache), "cold": objective_of(cold, final, cache)},
        "rounds": rounds,
    }


def simulation_comparison(train, dev, *, pool: int, evaluation: int, iterations: int, initial: int, batch: int):
    from learning.core.simulation import simulate

    cache = FeatureCache(max_tokens=10_000_000)
    out = {}
    for name, warm in (("cold", False), ("warm", True)):
        began = time.perf_counter()
        result = simulate(train[:pool], dev[:evaluation],
                          tagger_factory=lambda warm=warm: CRFTagger(feature_cache=cache, warm_start=warm),
                          strategies=["LCUB_6", "Random"], batch=batch, initial=initial, iterations=iterations,
                          runs=1, seed=0)
        out[name] = {
            "seconds": round(time.perf_counter() - began, 1),
            "strategies": {s: {"aulc": round(r["aulc"], 4), "final_f1": round(r["f1_mean"][-1], 4),
                               "f1": [round(x, 4) for x in r["f1_mean"]]}
                           for s, r in result["strategies"].items()},
        }
    out["warm_over_cold_seconds"] = round(out["warm"]["seconds"] / out["cold"]["seconds"], 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", type=int, default=400)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--simulation", action="store_true")
    parser.add_argument("--sim-pool", type=int, default=300)
    parser.add_argument("--sim-eval", type=int, default=100)
    parser.add_argument("--sim-iterations", type=int, default=10)
    parser.add_argument("--no-prepare", dest="prepare", action="store_false")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.start, args.batches, args.sim_pool, args.sim_eval, args.sim_iterations = 60, 4, 80, 40, 3
    train, dev = read_split("train"), read_split("dev")
    if not train or not dev:
        print(json.dumps({"bench": "warm_start", "skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    dev = dev if not args.quick else dev[:60]
    out = {"bench": "warm_start", **warm_sequence(train, dev, start=args.start, batch=args.batch,
                                                   batches=args.batches, prepare=args.prepare)}
    if args.simulation:
        out["simulation"] = simulation_comparison(train, dev, pool=args.sim_pool, evaluation=args.sim_eval,
                                                  iterations=args.sim_iterations, initial=20, batch=args.batch)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
