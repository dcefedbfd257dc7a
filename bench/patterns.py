"""Structured-PHI patterns (``learning.core.patterns``) on MEDDOCAN, alone and merged into the CRF's spans.

1. ``patterns``: per pattern, on train and on dev (every match of each pattern, overlaps kept): its matches,
   those on no gold PHI (``off_phi``; precision = 1 - off_phi / matches), the gold entities of the labels it
   maps to in MEDDOCAN (``gold``) and how many of them a match finds with the same extent (``found_exact``)
   or overlaps (``found_overlap``).
2. ``crf`` (reference) against ``crf_sure`` (sure matches merged by ``patterns.merge``) and
   ``crf_sure_likely`` (likely ones too) on dev, the CRF trained on train (or --train-limit documents):
   token leakage, binary token P/R, entity P/R/F1, per-label leakage; how many of the CRF's missed PHI
   tokens a sure match covers and how many the merge recovers; the false-positive tokens and spans the
   merge adds; and the seconds to find every pattern in dev against the CRF's prediction time.

Prints one JSON line. Options: --train-limit (documents, for quick runs), --no-crf (part 1 only).
"""
from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from typing import Sequence  # noqa: E402

from annotator.schemas import MEDDOCAN  # noqa: E402 - plain data, no Django
from corpus.text import Token, tokenize  # noqa: E402
from corpus.types import Document, Span  # noqa: E402
from learning.core.metrics import evaluate, token_types  # noqa: E402
from learning.core.patterns import LIKELY, SURE, Match, find, merge, patterns_for  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402

SCHEMA = "MEDDOCAN"
SCHEMA_LABELS = MEDDOCAN


def pattern_figures(docs: Sequence[Document], matches: Sequence[Sequence[Match]]) -> dict:
    counts: dict[str, Counter] = defaultdict(Counter)
    for doc, found in zip(docs, matches):
        by_pattern: dict[str, list[Match]] = defaultdict(list)
        for m in found:
            by_pattern[m.pattern].append(m)
            c = counts[m.pattern]
            c["matches"] += 1
            if not any(s.start < m.end and m.start < s.end for s in doc.spans):
                c["off_phi"] += 1
        for pattern in patterns_for("es"):
            labels = set(pattern.labels(SCHEMA))
            mine = by_pattern.get(pattern.name, [])
            for gold in doc.spans:
                if gold.label not in labels:
                    continue
                c = counts[pattern.name]
                c["gold"] += 1
                c["found_exact"] += any(m.start == gold.start and m.end == gold.end for m in mine)
                c["found_overlap"] += any(m.start < gold.end and gold.start < m.end for m in mine)
    out = {}
    for pattern in patterns_for("es"):
        c = counts.get(pattern.name)
        if not c:
            continue
        out[pattern.name] = {
            "precision_class": pattern.precision, "matches": c["matches"], "off_phi": c["off_phi"],
            "precision": round(1 - c["off_phi"] / c["matches"], 4) if c["matches"] else None,
            "gold": c["gold"], "found_exact": c["found_exact"], "found_overlap": c["found_overlap"],
        }
    return out


def leakage_by_label(docs: Sequence[Document], predicted: Sequence[Sequence[Span]],
                     tokens: Sequence[Sequence[Token]]) -> dict[str, list[int]]:
    """Gold label -> [gold PHI tokens, of them predicted non-PHI]."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for doc, pred, toks in zip(docs, predicted, tokens):
        for g, p in zip(token_types(toks, doc.spans), token_types(toks, pred)):
            if g is not None:
                out[g][0] += 1
                out[g][1] += p is None
    return out


def model_figures(docs, predicted, tokens) -> dict:
    scores = evaluate(docs, predicted, tokens)
    counts = scores["counts"]
    return {
        "leakage": round(scores["leakage"], 5),
        "token_p": round(scores["token"]["p"], 4), "token_r": round(scores["token"]["r"], 4),
        "entity_p": round(scores["entity"]["p"], 4), "entity_r": round(scores["entity"]["r"], 4),
        "entity_f1": round(scores["entity"]["f1"], 4),
        "leaked_tokens": counts["token_gold"] - counts["token_tp"],
        "fp_tokens": counts["token_pred"] - counts["token_tp"], "spans": counts["pred"],
        "fp_spans": counts["pred"] - counts["tp"],
    }


def missed_tokens(docs, predicted, tokens) -> list[list[int]]:
    out = []
    for doc, pred, toks in zip(docs, predicted, tokens):
        out.append([i for i, (g, p) in enumerate(zip(token_types(toks, doc.spans), token_types(toks, pred)))
                    if g is not None and p is None])
    return out


def covered(toks: Sequence[Token], matches: Sequence[Match]) -> set[int]:
    return {i for m in matches for i, t in enumerate(toks) if m.start <= t.start and t.end <= m.end}


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--no-crf", action="store_true")
    args = parser.parse_args()
    train, dev = read_split("train", args.train_limit), read_split("dev")
    if not train or not dev:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    train_tokens = [tokenize(d.text) for d in train]
    dev_tokens = [tokenize(d.text) for d in dev]
    started = time.perf_counter()
    dev_every = [find(d.text, "es", tokens=t, overlapping=True) for d, t in zip(dev, dev_tokens)]
    find_seconds = time.perf_counter() - started
    train_every = [find(d.text, "es", tokens=t, overlapping=True) for d, t in zip(train, train_tokens)]
    out: dict = {
        "bench": "patterns",
        "train_docs": len(train), "dev_docs": len(dev),
        "patterns": {"train": pattern_figures(train, train_every), "dev": pattern_figures(dev, dev_every)},
        "find_seconds_dev": round(find_seconds, 3),
    }
    if not args.no_crf:
        from learning.core.taggers.crf import CRFTagger

        tagger = CRFTagger()
        started = time.perf_counter()
        tagger.fit(train)
        out["train_seconds"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        crf = tagger.predict(dev)
        predict_seconds = time.perf_counter() - started
        dev_found = [find(d.text, "es", tokens=t) for d, t in zip(dev, dev_tokens)]
        started = time.perf_counter()
        with_sure = [merge(p, m, SCHEMA_LABELS) for p, m in zip(crf, dev_found)]
        merge_seconds = time.perf_counter() - started
        with_likely = [merge(p, m, SCHEMA_LABELS, precisions=(SURE, LIKELY)) for p, m in zip(crf, dev_found)]
        variants = {"crf": crf, "crf_sure": with_sure, "crf_sure_likely": with_likely}
        figures = {name: model_figures(dev, pred, dev_tokens) for name, pred in variants.items()}
        missed = missed_tokens(dev, crf, dev_tokens)
        sure_cover = [covered(t, [m for m in f if m.precision == SURE]) for t, f in zip(dev_tokens, dev_found)]
        any_cover = [covered(t, f) for t, f in zip(dev_tokens, dev_found)]
        still_missed = missed_tokens(dev, with_sure, dev_tokens)
        base_leak = leakage_by_label(dev, crf, dev_tokens)
        sure_leak = leakage_by_label(dev, with_sure, dev_tokens)
        reference = figures["crf"]
        out.update({
            "predict_seconds": round(predict_seconds, 3),
            "merge_seconds": round(merge_seconds, 4),
            "find_over_predict_seconds": ratio(find_seconds, predict_seconds),
            "crf": reference,
            "crf_sure": figures["crf_sure"],
            "crf_sure_likely": figures["crf_sure_likely"],
            "crf_missed_tokens": sum(map(len, missed)),
            "missed_covered_by_sure": sum(len(set(m) & c) for m, c in zip(missed, sure_cover)),
            "missed_covered_by_any": sum(len(set(m) & c) for m, c in zip(missed, any_cover)),
            "missed_recovered_by_sure_merge": sum(map(len, missed)) - sum(map(len, still_missed)),
            "sure_merge_added_fp_tokens": figures["crf_sure"]["fp_tokens"] - reference["fp_tokens"],
            "sure_merge_added_fp_spans": figures["crf_sure"]["fp_spans"] - reference["fp_spans"],
            "leakage_ratio_sure_vs_crf": ratio(figures["crf_sure"]["leakage"], reference["leakage"]),
            "leakage_ratio_sure_likely_vs_crf": ratio(figures["crf_sure_likely"]["leakage"], reference["leakage"]),
            "token_p_ratio_sure_vs_crf": ratio(figures["crf_sure"]["token_p"], reference["token_p"]),
            "entity_f1_ratio_sure_vs_crf": ratio(figures["crf_sure"]["entity_f1"], reference["entity_f1"]),
            "leakage_by_label": {
                label: {"gold_tokens": n, "crf_leaked": leaked, "crf_sure_leaked": sure_leak[label][1]}
                for label, (n, leaked) in sorted(base_leak.items())
            },
        })
    print(json.dumps(out))


if __name__ == "__main__":
    main()
