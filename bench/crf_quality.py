"""CRF trained on MEDDOCAN train, evaluated on dev: entity-exact and token-level micro P/R/F1.

Prints one JSON line.  Options: --c1, --c2, --max-iterations, --train-limit (documents, for quick runs).
"""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from corpus.bio import spans_to_bio  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402
from corpus.text import tokenize  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402


def prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"p": round(p, 4), "r": round(r, 4), "f1": round(f, 4), "tp": tp, "fp": fp, "fn": fn}


def evaluate(docs, predicted_spans) -> dict:
    """Entity: exact (start, end, label) matches; token: per-token typed label (B/I ignored), non-O only."""
    etp = efp = efn = 0
    ttp = tfp = tfn = 0
    for doc, pred in zip(docs, predicted_spans):
        gold = set(doc.spans)
        got = set(pred)
        etp += len(gold & got)
        efp += len(got - gold)
        efn += len(gold - got)
        toks = tokenize(doc.text)
        g_tags = [t[2:] if t != "O" else "O" for t in spans_to_bio(toks, doc.spans)[0]]
        p_tags = [t[2:] if t != "O" else "O" for t in spans_to_bio(toks, pred)[0]]
        for g, p in zip(g_tags, p_tags):
            if p != "O" and p == g:
                ttp += 1
            else:
                if p != "O":
                    tfp += 1
                if g != "O":
                    tfn += 1
    return {"entity": prf(etp, efp, efn), "token": prf(ttp, tfp, tfn)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--c1", type=float, default=None)
    parser.add_argument("--c2", type=float, default=None)
    parser.add_argument("--max-iterations", type=int, default=None)
    parser.add_argument("--train-limit", type=int, default=None)
    args = parser.parse_args()
    train = read_split("train", args.train_limit)
    dev = read_split("dev")
    if not train or not dev:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    given = (("c1", args.c1), ("c2", args.c2), ("max_iterations", args.max_iterations))
    params = {k: v for k, v in given if v is not None}
    tagger = CRFTagger(**params)
    t0 = time.perf_counter()
    tagger.fit(train)
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    predicted = tagger.predict(dev)
    predict_s = time.perf_counter() - t0
    scores = evaluate(dev, predicted)
    out = {
        "bench": "crf_quality",
        "params": {"c1": tagger.c1, "c2": tagger.c2, "max_iterations": tagger.max_iterations},
        "train_docs": len(train),
        "train_tokens": sum(len(tokenize(d.text)) for d in train),
        "eval_docs": len(dev),
        "eval_tokens": sum(len(tokenize(d.text)) for d in dev),
        "n_attributes": len(tagger.attributes_),
        "train_seconds": round(train_s, 2),
        "predict_seconds": round(predict_s, 2),
        "entity": scores["entity"],
        "token": scores["token"],
        "reference_entity_f1_plain_crf": 0.946,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
