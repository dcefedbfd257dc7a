"""Speed of the agreement figures: MEDDOCAN train (500 records) as annotated by two people — the gold, and the
gold with seeded disagreements (5 % of spans dropped, 5 % with a boundary moved by a token, 3 % relabelled,
2 % extra spans added) — the way the agreement page computes them: every record tokenized, the project's
figures overall and for MEDDOCAN's 29 labels, then each record's own and each day's.

The reference, measured in the same run, is tokenizing the 500 records alone (the floor of any token-level
figure): ``ratio`` = agreement / tokenizing. Goal: the whole page's figures under 1 s.

Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from corpus.text import tokenize  # noqa: E402
from corpus.types import Span  # noqa: E402
from learning.core.agreement import RecordSubmissions, agreement  # noqa: E402
from annotator.schemas import MEDDOCAN  # noqa: E402 - plain data, no Django
from tests.unit.core.meddocan import read_split  # noqa: E402

ROUNDS = 3


def disagree(text: str, spans, labels, rng: np.random.Generator, *, extra: float = 0.02) -> list[Span]:
    """The gold with seeded disagreements of a second annotator: 5 % missed, 5 % with the end moved to the next
    token's, 3 % relabelled, and ``extra`` (a share of the gold's count, one at least) spans added on free tokens."""
    tokens = tokenize(text)
    starts = np.array([t.start for t in tokens])
    out = []
    for span in spans:
        draw = rng.random()
        if draw < 0.05:
            continue  # missed
        if draw < 0.10:  # a boundary moved by one token
            after = int(np.searchsorted(starts, span.end))
            out.append(Span(span.start, tokens[after].end, span.label) if after < len(tokens) else span)
        elif draw < 0.13:
            out.append(Span(span.start, span.end, labels[int(rng.integers(len(labels)))]))
        else:
            out.append(span)
    if extra > 0:
        free = [t for t in tokens if not any(s.start < t.end and t.start < s.end for s in out)]
        for index in rng.choice(len(free), size=min(max(1, round(extra * len(spans))), len(free)), replace=False):
            out.append(Span(free[index].start, free[index].end, labels[int(rng.integers(len(labels)))]))
    return sorted(out)


def page_figures(texts, first, second, labels) -> dict:
    """What ``learning.selectors.agreement.project_agreement`` computes, without the database: ten "days"."""
    records = [RecordSubmissions(text, {"gold": a, "second": b}, tokenize(text))
               for text, a, b in zip(texts, first, second)]
    return agreement(records, labels=labels, groups=[i // 50 for i in range(len(records))])


def main() -> None:
    docs = read_split("train")
    if not docs:
        print(json.dumps({"benchmark": "agreement", "skipped": "MEDDOCAN is not in ../shared/datasets"}))
        return
    labels = list(MEDDOCAN)
    rng = np.random.default_rng(7)
    texts = [d.text for d in docs]
    first = [list(d.spans) for d in docs]
    second = [disagree(d.text, d.spans, labels, rng) for d in docs]
    page_figures(texts[:5], first[:5], second[:5], labels)  # warm-up (imports, caches)
    timings = {"tokenize": [], "agreement": []}
    result = None
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for text in texts:
            tokenize(text)
        timings["tokenize"].append(time.perf_counter() - started)
        started = time.perf_counter()
        result = page_figures(texts, first, second, labels)
        timings["agreement"].append(time.perf_counter() - started)
    seconds, reference = min(timings["agreement"]), min(timings["tokenize"])
    overall = result["overall"]
    print(json.dumps({
        "benchmark": "agreement", "records": result["records"], "annotators": 2, "tokens": result["tokens"],
        "per_record": len(result["per_record"]), "days": len(result["per_group"]), "spans": overall["spans"], "rounds": ROUNDS,
        "seconds": round(seconds, 4), "tokenize_seconds": round(reference, 4), "ratio": round(seconds / reference, 2),
        "goal_seconds": 1.0, "goal_met": seconds < 1.0,
        "figures": {k: round(v, 4) for k, v in overall.items() if k != "spans" and v is not None},
    }))


if __name__ == "__main__":
    main()
