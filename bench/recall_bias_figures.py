"""How optimistic in-sample recall-bias figures are: the live loop's thresholds tuned for F_β on the
evaluation documents, scored on those same documents (the reference, what the dashboard used to show)
against the cross-fitted figures of ``learning.core.training`` (each fold scored with thresholds tuned on
the other folds).

CRF trained on MEDDOCAN train (or --train-limit documents of it), evaluated on dev. Prints one JSON line:
per β, token-level binary P/R, leakage and entity F1 for both ways, and their ratio.
"""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from learning.core.metrics import evaluate  # noqa: E402
from learning.core.recall_bias import recall_biased_spans  # noqa: E402
from learning.core.registry import tagger_factory  # noqa: E402
from learning.core.training import CROSS_FIT, cross_fit_recall_bias, train_and_evaluate  # noqa: E402
from tests.unit.core.meddocan import read_split  # noqa: E402


def figures(metrics: dict) -> dict:
    return {"token_p": round(metrics["token"]["p"], 4), "token_r": round(metrics["token"]["r"], 4),
            "leakage": round(metrics["leakage"], 5), "entity_f1": round(metrics["entity"]["f1"], 4)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--betas", default="4,10")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train, dev = read_split("train"), read_split("dev")
    if args.train_limit:
        train = train[: args.train_limit]
    result: dict = {"benchmark": "recall_bias_figures", "train_docs": len(train), "eval_docs": len(dev)}
    started = time.perf_counter()
    model = train_and_evaluate(train, dev, tagger_factory=tagger_factory("crf", seed=args.seed), seed=args.seed,
                               recall_bias_tuning=CROSS_FIT)
    marginals = model.tagger.predict_marginals(dev)
    labels = list(model.tagger.labels_)
    result["unbiased"] = figures(model.metrics)
    for beta in [float(b) for b in args.betas.split(",")]:
        # chosen: the thresholds tuned on every evaluation document, what the dashboard used to report on.
        chosen, cross = cross_fit_recall_bias(dev, model.eval_tokens, marginals, labels, beta, seed=args.seed)
        in_sample = evaluate(dev, [recall_biased_spans(t, m, labels, chosen.tau_main, chosen.tau_alt)
                                   for t, m in zip(model.eval_tokens, marginals)], model.eval_tokens)
        reference, honest = figures(in_sample), figures(cross)
        result[f"beta_{beta:g}"] = {
            "in_sample": reference, "cross_fitted": honest,
            "ratio_leakage": round(honest["leakage"] / reference["leakage"], 3) if reference["leakage"] else None,
            "ratio_token_p": round(honest["token_p"] / reference["token_p"], 4) if reference["token_p"] else None,
        }
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
