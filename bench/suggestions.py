"""What annotators are shown against what the model would say: entity-exact P/R/F1 on MEDDOCAN dev of

- ``viterbi``: the CRF's own Viterbi path (``tagger.predict``, what the unbiased figures score), the reference;
- ``tokenwise``: the suggestions as they were decoded, token by token from the marginals (argmax, or the
  recall-bias rule), read back leniently into spans;
- ``decoder``: the suggestions as they are decoded now, one BIO-consistent sequence per document
  (``learning.core.decoding.decode``);

without a recall bias, and with one tuned for F_β (β = 2 by default) on a development part held out of
train (``learning.core.training``, ``"dev"`` tuning: the CRF trains on the rest). For each: the number of
spans, the gold entities cut into two or more predicted spans, the documents whose token-wise labels are not
a valid BIO sequence, and the decoding time. Ratios compare with the reference of the same run (Viterbi
unbiased; token-wise biased).

CRF (default parameters) trained on MEDDOCAN train (or --train-limit documents of it). Prints one JSON line.
"""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Sequence  # noqa: E402

from corpus.bio import bio_to_spans  # noqa: E402
from corpus.types import Document, Span  # noqa: E402
from learning.core.decoding import decode_tokenwise, decoded_spans, is_bio_valid  # noqa: E402
from learning.core.metrics import evaluate  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402
from learning.core.training import TUNE_ON_DEV, train_and_evaluate  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402


def split_entities(docs: Sequence[Document], predicted: Sequence[Sequence[Span]]) -> int:
    """Gold entities overlapped by two or more predicted spans."""
    cut = 0
    for doc, spans in zip(docs, predicted):
        for gold in doc.spans:
            cut += sum(1 for s in spans if s.start < gold.end and s.end > gold.start) >= 2
    return cut


def figures(docs, predicted, tokens, seconds: float) -> dict:
    scores = evaluate(docs, predicted, tokens)
    return {
        "entity_p": round(scores["entity"]["p"], 4), "entity_r": round(scores["entity"]["r"], 4),
        "entity_f1": round(scores["entity"]["f1"], 4),
        "token_p": round(scores["token"]["p"], 4), "token_r": round(scores["token"]["r"], 4),
        "spans": sum(len(s) for s in predicted), "split_entities": split_entities(docs, predicted),
        "seconds": round(seconds, 3),
    }


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--beta", type=float, default=2.0)
    parser.add_argument("--dev-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train, dev = read_split("train", args.train_limit), read_split("dev")
    if not train or not dev:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    started = time.perf_counter()
    model = train_and_evaluate(train, dev, tagger_factory=CRFTagger, seed=args.seed, recall_bias_beta=args.beta,
                               recall_bias_tuning=TUNE_ON_DEV, dev_fraction=args.dev_fraction)
    tokens = model.eval_tokens
    labels = list(model.tagger.labels_)
    marginals = model.tagger.predict_marginals(dev)
    bias = (model.recall_bias.tau_main, model.recall_bias.tau_alt)
    gold = sum(len(d.spans) for d in dev)
    result: dict = {
        "bench": "suggestions", "train_docs": len(model.train_documents), "tuning_docs": len(model.dev_documents),
        "eval_docs": len(dev), "gold_entities": gold, "beta": args.beta,
        "tau_main": bias[0], "tau_alt": bias[1], "tuning_f_beta": round(model.recall_bias.score, 4),
    }

    t0 = time.perf_counter()
    viterbi = model.tagger.predict(dev)
    result["viterbi"] = figures(dev, viterbi, tokens, time.perf_counter() - t0)
    for name, thresholds in (("unbiased", None), ("biased", bias)):
        t0 = time.perf_counter()
        chosen = [decode_tokenwise(m, labels, thresholds) for m in marginals]
        tokenwise = [bio_to_spans(t, [labels[i] for i in c.tolist()]) for t, c in zip(tokens, chosen)]
        tokenwise_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        decoder = [decoded_spans(t, m, labels, thresholds) for t, m in zip(tokens, marginals)]
        decoder_s = time.perf_counter() - t0
        block = {
            "tokenwise": figures(dev, tokenwise, tokens, tokenwise_s),
            "decoder": figures(dev, decoder, tokens, decoder_s),
            "invalid_tokenwise_docs": sum(not is_bio_valid(c, labels) for c in chosen),
        }
        reference = result["viterbi"] if thresholds is None else block["tokenwise"]
        for key in ("tokenwise", "decoder") if thresholds is None else ("decoder",):
            block[f"ratio_f1_{key}"] = ratio(block[key]["entity_f1"], reference["entity_f1"])
            block[f"ratio_r_{key}"] = ratio(block[key]["entity_r"], reference["entity_r"])
        result[name] = block
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
