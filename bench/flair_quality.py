"""Entity-level quality and training cost of the BiLSTM-CRF tagger on MEDDOCAN (train -> dev).

Prints one JSON line.  When the CRF tagger is available it is trained on the same documents in the same
run, and the BiLSTM-CRF's F1 is also reported as a ratio to the CRF's (these machines are shared, so
absolute times drift; the ratio is the figure to compare across runs).

    python bench/flair_quality.py --epochs 10 --hidden 128
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

from learning.core.taggers.flair_tagger import BiLSTMCRFTagger  # noqa: E402
from learning.core.text import tokenize  # noqa: E402
from tests.unit.core.meddocan import read_split  # noqa: E402


def exact_match(gold_docs, predicted) -> dict[str, float]:
    """Micro precision, recall and F1 of exactly matching (start, end, label) entities."""
    tp = n_pred = n_gold = 0
    for doc, spans in zip(gold_docs, predicted):
        gold = {(s.start, s.end, s.label) for s in doc.spans}
        pred = {(s.start, s.end, s.label) for s in spans}
        tp += len(gold & pred)
        n_pred += len(pred)
        n_gold += len(gold)
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def run_reference(train, dev) -> dict[str, float]:
    try:
        from learning.core.taggers.crf import CRFTagger
    except ImportError:
        return {}
    started = time.perf_counter()
    crf = CRFTagger().fit(train)
    seconds = time.perf_counter() - started
    scores = exact_match(dev, crf.predict(dev))
    return {"crf_f1": scores["f1"], "crf_train_seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--word-dim", type=int, default=64)
    parser.add_argument("--char-hidden", type=int, default=25)
    parser.add_argument("--char-lm", action="store_true", help="also train forward/backward character LMs")
    parser.add_argument("--lr", type=float, default=None, help="default: the tagger's")
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default=None)
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--sentences-per-instance", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N train/dev documents")
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

    params = dict(
        max_epochs=args.epochs,
        hidden_size=args.hidden,
        word_dim=args.word_dim,
        char_hidden_size=args.char_hidden,
        char_lm=args.char_lm,
        n_threads=args.threads,
        verbose=args.verbose,
    )
    for name, value in (
        ("learning_rate", args.lr),
        ("optimizer", args.optimizer),
        ("mini_batch_size", args.batch),
        ("sentences_per_instance", args.sentences_per_instance),
    ):
        if value is not None:
            params[name] = value
    tagger = BiLSTMCRFTagger(**params)
    tagger.fit(train, unlabelled=dev if args.unlabelled_dev else None)

    started = time.perf_counter()
    predicted = tagger.predict(dev)
    predict_seconds = time.perf_counter() - started

    dev_tokens = sum(len(tokenize(d.text)) for d in dev)
    result = {
        "bench": "flair_quality",
        **{k: v for k, v in tagger.get_params().items() if k not in ("verbose", "n_threads")},
        "threads": args.threads,
        "unlabelled_dev": args.unlabelled_dev,
        "train_docs": len(train),
        "train_tokens": sum(len(tokenize(d.text)) for d in train),
        "dev_docs": len(dev),
        "dev_tokens": dev_tokens,
        "train_seconds": round(tagger.train_seconds_, 1),
        "predict_tokens_per_second": round(dev_tokens / predict_seconds),
        **exact_match(dev, predicted),
    }
    if args.reference:
        reference = run_reference(train, dev)
        result.update(reference)
        if reference.get("crf_f1"):
            result["f1_ratio_to_crf"] = round(result["f1"] / reference["crf_f1"], 4)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
