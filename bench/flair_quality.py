"""Entity-level quality and training cost of the BiLSTM-CRF tagger on MEDDOCAN (train -> dev).

Prints one JSON line.  With ``--reference`` the CRF tagger is trained on the same documents in the same
run and the BiLSTM-CRF's F1 and training time are also given as ratios to the CRF's (these machines are
shared, so absolute times drift; ratios are the figures to compare across runs).

    python bench/flair_quality.py --epochs 10 --hidden 128 --set optimizer=adam --set learning_rate=0.003
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from learning.core.metrics import evaluate  # noqa: E402
from learning.core.registry import parse_params  # noqa: E402
from learning.core.taggers.flair_tagger import BiLSTMCRFTagger  # noqa: E402
from corpus.text import tokenize  # noqa: E402
from tests.unit.core.meddocan import read_split  # noqa: E402


def scores(dev, predicted) -> dict[str, float]:
    result = evaluate(dev, predicted)
    entity = result["entity"]
    return {
        "precision": round(entity["p"], 4),
        "recall": round(entity["r"], 4),
        "f1": round(entity["f1"], 4),
        "token_f1": round(result["token"]["f1"], 4),
        "leakage": round(result["leakage"], 4),
    }


def run_reference(train, dev) -> dict[str, float]:
    from learning.core.taggers.crf import CRFTagger

    started = time.perf_counter()
    crf = CRFTagger().fit(train)
    seconds = time.perf_counter() - started
    crf_scores = scores(dev, crf.predict(dev))
    return {"crf_f1": crf_scores["f1"], "crf_leakage": crf_scores["leakage"], "crf_train_seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=None, help="max_epochs (default: the tagger's)")
    parser.add_argument("--hidden", type=int, default=None, help="BiLSTM hidden size (default: the tagger's)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="any tagger parameter")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N train and N dev documents")
    parser.add_argument(
        "--unlabelled-dev", action="store_true", help="train the word vectors on the dev texts too (as a pool)"
    )
    parser.add_argument("--reference", action="store_true", help="also train the CRF on the same data")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    train = read_split("train", args.limit)
    dev = read_split("dev", args.limit)
    if not train or not dev:
        raise SystemExit("MEDDOCAN not found next to the repository (../shared/datasets/meddocan)")

    params = parse_params(args.set)
    if args.epochs is not None:
        params["max_epochs"] = args.epochs
    if args.hidden is not None:
        params["hidden_size"] = args.hidden
    tagger = BiLSTMCRFTagger(**params, n_threads=args.threads, fit_threads=args.threads, verbose=args.verbose)
    tagger.fit(train, unlabelled=dev if args.unlabelled_dev else None)

    started = time.perf_counter()
    predicted = tagger.predict(dev)
    predict_seconds = time.perf_counter() - started

    dev_tokens = sum(len(tokenize(d.text)) for d in dev)
    result = {
        "bench": "flair_quality",
        **{k: v for k, v in tagger.get_params().items() if k not in ("verbose", "n_threads", "fit_threads")},
        "threads": args.threads,
        "unlabelled_dev": args.unlabelled_dev,
        "train_docs": len(train),
        "train_tokens": sum(len(tokenize(d.text)) for d in train),
        "dev_docs": len(dev),
        "dev_tokens": dev_tokens,
        "train_seconds": round(tagger.train_seconds_, 1),
        "predict_tokens_per_second": round(dev_tokens / predict_seconds),
        **scores(dev, predicted),
    }
    if args.reference:
        reference = run_reference(train, dev)
        result.update(reference)
        if reference["crf_f1"]:
            result["f1_ratio_to_crf"] = round(result["f1"] / reference["crf_f1"], 4)
        if reference["crf_train_seconds"]:
            result["train_time_ratio_to_crf"] = round(result["train_seconds"] / reference["crf_train_seconds"], 2)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
