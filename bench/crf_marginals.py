"""Fast CRF marginals (sparse features x weights + numpy forward-backward) against sklearn-crfsuite.

Trains a CRF on MEDDOCAN train (or loads the one a previous run left in the temp folder), then on MEDDOCAN
dev times, on one thread:
* ``fast``: ``CRFTagger.predict_marginals`` with the documents' features already cached (the situation
  of every pool scoring after the first),
* ``fast_cold``: the same including feature extraction,
* ``reference``: ``sklearn_crfsuite.CRF.predict_marginals`` on the same sentences and attributes,
and reports tokens per second, the ratio fast / reference and the largest absolute difference.
Prints one JSON line.
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from learning.core.features import FeatureCache  # noqa: E402
from model_cache import cached_crf, load  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402


def best_of(n: int, fn):
    times = []
    result = None
    for _ in range(n):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    except (AttributeError, OSError):
        pass
    train = read_split("train")
    dev = read_split("dev")
    if not train or not dev:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    path, train_seconds = cached_crf(train)
    tagger = load(path)

    cold_cache = FeatureCache()
    tagger.feature_cache = cold_cache
    t0 = time.perf_counter()
    tagger.predict_marginals(dev)
    cold_s = time.perf_counter() - t0
    fast_s, fast = best_of(3, lambda: tagger.predict_marginals(dev))
    n_tokens = sum(m.shape[0] for m in fast)

    # The reference gets the identical sentences and attribute lists, built outside the timing.
    feats = tagger.features(dev)
    xs = [f.items(a, b) for f in feats for a, b in f.sentences]
    crf = tagger.crf_
    t0 = time.perf_counter()
    ref_sentences = crf.predict_marginals(xs)
    ref_s = time.perf_counter() - t0

    columns = [tagger.labels_.index(lab) for lab in crf.classes_]
    max_diff = 0.0
    k = 0
    diffs = []
    for f, m in zip(feats, fast):
        for a, b in f.sentences:
            ref = np.array([[pos[lab] for lab in crf.classes_] for pos in ref_sentences[k]]) if b > a else None
            k += 1
            if ref is None:
                continue
            d = np.abs(m[a:b][:, columns] - ref)
            diffs.append(d.ravel())
            max_diff = max(max_diff, float(d.max()))
    all_diffs = np.concatenate(diffs)
    out = {
        "bench": "crf_marginals",
        "eval_docs": len(dev),
        "eval_tokens": n_tokens,
        "n_labels": len(tagger.labels_),
        "n_attributes": len(tagger.attributes_),
        "train_seconds": None if train_seconds is None else round(train_seconds, 2),
        "fast_tokens_per_s": round(n_tokens / fast_s),
        "fast_cold_tokens_per_s": round(n_tokens / cold_s),
        "reference_tokens_per_s": round(n_tokens / ref_s),
        "ratio_fast_vs_reference": round(ref_s / fast_s, 2),
        "ratio_fast_cold_vs_reference": round(ref_s / cold_s, 2),
        "max_abs_diff": max_diff,
        "median_abs_diff": float(np.median(all_diffs)),
        "rows_sum_to_one": bool(all(np.allclose(m.sum(axis=1), 1.0) for m in fast)),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
