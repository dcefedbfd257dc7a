"""The CRF, the BiLSTM-CRF and their ensemble on MEDDOCAN dev, in one run, on the CPU: entity F1, token
leakage and binary token precision without and with the recall bias (β = 4 by default), and training time.

Both taggers are trained once, with their defaults (the CRF with the gold lexicon; the BiLSTM-CRF: 10
epochs, FastText word vectors and a character BiLSTM trained on the same text, no character language
model), on MEDDOCAN train minus a tuning part (``--tune-fraction``, drawn with ``--seed``, as
``bench/leakage.py`` draws it); the recall-bias thresholds are tuned on that part, never on dev. The
ensemble (``learning.core.taggers.ensemble``) averages their marginals with the CRF's weight ``w``; each
``--weights`` value is a row (1: the CRF alone — the reference; 0: the BiLSTM-CRF alone). Per row:
``decoded`` (the best valid BIO sequence of the marginals), ``shown`` (what annotators are shown and exports
conceal: the pre-annotations completed from the record), and both with the tuned pair; leakage per type for
the shown rows with the bias. ``shown_leaky_betas``: what is shown with a pair per type
(``tune_recall_bias_per_label``), the types that leak more than 2% on the tuning part with the single pair at
``--leaky-beta``, the others at β — can a per-label β bring every label under 2%? Ratios are to the CRF alone in
the same run.

Prints one JSON line. Options: --train-limit (documents of train, for quick runs), --epochs, --threads.
"""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from corpus.text import tokenize  # noqa: E402
from leakage import decode_all, figures, ratio, shown_spans, tuning_split  # noqa: E402
from learning.core.metrics import leakage_by_type  # noqa: E402
from learning.core.recall_bias import tune_recall_bias, tune_recall_bias_per_label  # noqa: E402
from learning.core.taggers.base import gold_tags  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402
from learning.core.taggers.ensemble import average_marginals, union_labels  # noqa: E402
from learning.core.taggers.flair_tagger import BiLSTMCRFTagger  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--tune-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beta", type=float, default=4.0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the BiLSTM-CRF")
    parser.add_argument("--weights", default="1,0.7,0.5,0.3,0", help="the CRF's weight in each ensemble row")
    parser.add_argument("--leaky-beta", type=float, default=20.0,
                        help="β of the types leaking more than 2%% on the tuning part (row shown_leaky_betas)")
    args = parser.parse_args()
    started = time.perf_counter()
    split = tuning_split(args)
    if split is None:
        return
    train, tuning, dev = split

    members, train_seconds, predict_seconds = {}, {}, {}
    for name, make in (("crf", lambda: CRFTagger()),
                       ("bilstm_crf", lambda: BiLSTMCRFTagger(max_epochs=args.epochs, seed=args.seed,
                                                              n_threads=args.threads,
                                                              fit_threads=args.threads))):
        t0 = time.perf_counter()
        members[name] = make().fit(train)
        train_seconds[name] = round(time.perf_counter() - t0, 1)
    tokens = [tokenize(d.text) for d in dev]
    tuning_gold = [gold_tags(d, tokenize(d.text)) for d in tuning]
    marginals, tuning_marginals = {}, {}
    for name, tagger in members.items():
        t0 = time.perf_counter()
        marginals[name] = tagger.predict_marginals(dev)
        predict_seconds[name] = round(time.perf_counter() - t0, 1)
        tuning_marginals[name] = tagger.predict_marginals(tuning)
    member_labels = [list(members[name].labels_) for name in members]
    labels = union_labels(member_labels)

    rows: dict = {}
    for w in [float(x) for x in args.weights.split(",") if x]:
        weights = [w, 1.0 - w]
        dev_m = average_marginals(list(marginals.values()), member_labels, labels, weights)
        tuning_m = average_marginals(list(tuning_marginals.values()), member_labels, labels, weights)
        chosen = tune_recall_bias(tuning_m, tuning_gold, labels, args.beta)
        row = {"crf_weight": w, "tau_main": chosen.tau_main, "tau_alt": chosen.tau_alt}
        for suffix, thresholds in (("", None), ("_bias", chosen.thresholds)):
            t0 = time.perf_counter()
            row[f"decoded{suffix}"] = figures(dev, decode_all(tokens, dev_m, labels, thresholds), tokens,
                                              time.perf_counter() - t0)
            t0 = time.perf_counter()
            row[f"shown{suffix}"] = figures(dev, shown_spans(dev, tokens, dev_m, labels, thresholds), tokens,
                                            time.perf_counter() - t0)
        # The types that leak more than 2% on the tuning part with that pair get their own β (--leaky-beta).
        tuning_tokens = [tokenize(d.text) for d in tuning]
        leaks = leakage_by_type(tuning, decode_all(tuning_tokens, tuning_m, labels, chosen.thresholds), tuning_tokens)
        leaky = sorted(kind for kind, v in leaks.items() if v["leakage"] > 0.02)
        types = {label[2:] for label in labels if label != "O"}
        betas = {kind: args.leaky_beta if kind in leaky else args.beta for kind in types}
        pairs = tune_recall_bias_per_label(tuning_m, tuning_gold, labels, betas).thresholds
        t0 = time.perf_counter()
        row["shown_leaky_betas"] = figures(dev, shown_spans(dev, tokens, dev_m, labels, pairs), tokens,
                                           time.perf_counter() - t0)
        row["shown_leaky_betas"]["leaky_types"] = leaky
        for block in ("decoded", "decoded_bias", "shown"):
            row[block].pop("leakage_by_type")
            row[block].pop("entity_p_by_type")
        rows[f"w{w:g}"] = row
    reference = rows.get("w1")
    if reference:
        for row in rows.values():
            for block in ("decoded", "decoded_bias", "shown", "shown_bias", "shown_leaky_betas"):
                row[block]["ratio_leakage"] = ratio(row[block]["leakage"], reference[block]["leakage"])
                row[block]["ratio_entity_f1"] = ratio(row[block]["entity_f1"], reference[block]["entity_f1"])
    best = min(rows, key=lambda name: rows[name]["shown_bias"]["leakage"])
    print(json.dumps({
        "bench": "ensemble", "train_docs": len(train), "tuning_docs": len(tuning), "eval_docs": len(dev),
        "beta": args.beta, "epochs": args.epochs, "threads": args.threads, "train_seconds": train_seconds,
        "predict_dev_seconds": predict_seconds,
        "train_seconds_ratio": ratio(train_seconds["bilstm_crf"], train_seconds["crf"]),
        "rows": rows, "lowest_shown_bias_leakage": {"row": best, **{k: rows[best]["shown_bias"][k]
                                                                    for k in ("leakage", "token_p", "entity_f1")}},
        "seconds": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
