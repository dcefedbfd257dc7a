"""Scoring a shard of the unlabelled pool after a retrain, stage by stage, against the way it was done before.

``learning.services.retrain.score`` on one shard (250 pool records by default), without the database:

* ``marginals``: ``tagger.predict_marginals`` (label scores in float32 through one sparse product with the
  unknown attributes mapped to a row of zeros, forward-backward in float32 over time-major batches);
* ``strategy``: LCUB_6 scores of every record (``Strategy.score_many``);
* ``pre_annotations``: the suggestions shown to annotators (``pre_annotations_many``: the records decoded
  together, over the tokens the tagger's cached features already hold), once without a recall bias and
  once with one.

The reference is the same work done as it was before, kept below (``reference_*``): every record tokenized
again, label scores in float64 through a product that first drops the unknown attributes, forward-backward in
float64, and one decoding (and, where the token-wise labels are not a valid sequence, one Viterbi) per record.

``warm``: features already cached and the tagger's tables built (every shard after a worker's first), best of
``--repeats``. ``cold``: a fresh interpreter per path (modules imported, then timed: the tagger unpickled, the
records featurized, the first prediction). Tokens per second per stage and in total (marginals, strategy and
the recall-biased suggestions, what ``score`` does for a project with a recall bias), one thread; ratios are
new / reference of the same run. Checks: the largest difference of the marginals, whether the shard ranks the
same, whether the suggestions are the same spans (and possible misses) with confidences within 1e-4.

A CRF with default parameters trained on MEDDOCAN train (or ``--train-limit`` records of it; kept in the
temporary folder for the next run); the pool is MEDDOCAN dev and train, each text under a first line of its
own (``Registro 0003``). Prints one JSON line.
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from typing import Sequence  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from corpus.bio import OUTSIDE, bio_to_spans  # noqa: E402
from corpus.span_json import write_span  # noqa: E402
from corpus.text import tokenize  # noqa: E402
from corpus.types import Document  # noqa: E402
from learning.core.decoding import allowed_transitions, outside_index, phi_candidates  # noqa: E402
from learning.core.marginals import forward_backward_log  # noqa: E402
from learning.core.pre_annotation import MISSED_PHI_THRESHOLD, pre_annotations_many  # noqa: E402
from learning.core.strategies import PRESETS  # noqa: E402
from learning.core.marginals import length_batches  # noqa: E402
from learning.core.taggers.crf import CRFTagger, _sentence_layout  # noqa: E402
from model_cache import cached_crf, load, loads  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402

STRATEGY = PRESETS["LCUB_6"]


# The reference: scoring as it was done before ----------------------------------------------------------------

_REFERENCE_ROWS: dict[int, tuple] = {}


def reference_marginals(tagger: CRFTagger, docs: Sequence[Document]) -> list[np.ndarray]:
    feats = tagger.features(docs)
    starts, lengths = _sentence_layout(feats)
    unary = _reference_unary(tagger, feats)
    out = np.zeros_like(unary)
    for chosen in length_batches(lengths, 0.25, 32768):
        lens = lengths[chosen]
        width = int(lens.max())
        if width > 0:
            steps = np.arange(width)
            inside = steps[None, :] < lens[:, None]
            pos = np.where(inside, starts[chosen][:, None] + steps[None, :], 0)
            result = _reference_forward_backward(unary[pos], lens, tagger.transition_weights_)
            out[pos[inside]] = result[inside]
    pieces, offset = [], 0
    for f in feats:
        pieces.append(out[offset:offset + f.n_tokens])
        offset += f.n_tokens
    return pieces


def _reference_unary(tagger: CRFTagger, feats) -> np.ndarray:
    vocab = tagger._extractor().vocabulary
    cached = _REFERENCE_ROWS.get(id(tagger))
    if cached is None or cached[0] is not vocab:
        ids = np.fromiter((vocab.intern(a) for a in tagger.attributes_), dtype=np.int64, count=len(tagger.attributes_))
        rows = np.full(len(vocab), -1, dtype=np.int64)
        rows[ids] = np.arange(len(ids))
        cached = (vocab, rows)
    elif cached[1].shape[0] < len(vocab):
        rows = np.full(len(vocab), -1, dtype=np.int64)
        rows[: cached[1].shape[0]] = cached[1]
        cached = (vocab, rows)
    _REFERENCE_ROWS[id(tagger)] = cached
    rows_of = cached[1]
    n_tokens = sum(f.n_tokens for f in feats)
    indices = np.concatenate([f.indices for f in feats])
    offsets = np.cumsum([0] + [int(f.indptr[-1]) for f in feats[:-1]])
    indptr = np.concatenate([f.indptr[:-1] + off for f, off in zip(feats, offsets)] + [[indices.shape[0]]])
    rows = rows_of[indices]
    known = rows >= 0
    kept = np.concatenate(([0], np.cumsum(known)))
    matrix = sp.csr_matrix((np.ones(int(kept[-1])), rows[known], kept[indptr]),
                           shape=(n_tokens, tagger.state_weights_.shape[0]))
    return np.asarray(matrix @ tagger.state_weights_)


def _reference_forward_backward(unary: np.ndarray, lengths: np.ndarray, transition: np.ndarray) -> np.ndarray:
    n_seq, n_pos, n_labels = unary.shape
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        u = unary - unary.max(axis=2, keepdims=True)
        np.exp(u, out=u)
        trans_exp = np.exp(transition - transition.max())
        alpha = np.empty_like(u)
        a = u[:, 0, :] / u[:, 0, :].sum(axis=1, keepdims=True)
        alpha[:, 0, :] = a
        for t in range(1, n_pos):
            a = (a @ trans_exp) * u[:, t, :]
            a /= a.sum(axis=1, keepdims=True)
            alpha[:, t, :] = a
        beta = np.empty_like(u)
        end_row = np.full(n_labels, 1.0 / n_labels)
        b = np.broadcast_to(end_row, (n_seq, n_labels)).copy()
        beta[:, n_pos - 1, :] = b
        for t in range(n_pos - 2, -1, -1):
            b = (u[:, t + 1, :] * b) @ trans_exp.T
            b /= b.sum(axis=1, keepdims=True)
            restart = lengths - 1 == t
            if restart.any():
                b[restart] = end_row
            beta[:, t, :] = b
        post = alpha * beta
        post /= post.sum(axis=2, keepdims=True)
    post[~(np.arange(n_pos)[None, :] < lengths[:, None])] = 0.0
    for i in np.flatnonzero(~np.isfinite(post).all(axis=(1, 2))):
        post[i] = 0.0
        post[i, :lengths[i]] = forward_backward_log(unary[i, :lengths[i]], transition)
    return post


def reference_pre_annotations(text: str, marginals: np.ndarray, labels, recall_bias) -> dict:
    tokens = tokenize(text)
    if len(tokens) == 0:
        return {"spans": [], "possible_missed": []}
    chosen = _reference_decode(marginals, labels, recall_bias)
    shown = marginals[np.arange(len(tokens)), chosen]
    starts = np.array([token.start for token in tokens])
    spans = []
    for span in bio_to_spans(tokens, [labels[i] for i in chosen.tolist()]):
        first = int(np.searchsorted(starts, span.start))
        last = int(np.searchsorted(starts, span.end, side="left"))
        confidence = float(shown[first:max(last, first + 1)].min())
        spans.append(write_span(span, confidence=round(confidence, 4)))
    o_index = list(labels).index(OUTSIDE)
    p_phi = 1.0 - marginals[:, o_index]
    unsure = np.flatnonzero((chosen == o_index) & (p_phi >= MISSED_PHI_THRESHOLD))
    missed = [[tokens[i].start, tokens[i].end, round(float(p_phi[i]), 4)] for i in unsure.tolist()]
    return {"spans": spans, "possible_missed": missed}


def _reference_decode(m: np.ndarray, labels, recall_bias) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    if recall_bias is None:
        chosen = m.argmax(axis=1)
        best_phi, relabel = chosen, np.zeros(m.shape[0], dtype=bool)
    else:
        o = outside_index(labels)
        argmax, p_o, best_phi = phi_candidates(m, o)
        relabel = (argmax == o) & (p_o < recall_bias[0]) & (m[np.arange(m.shape[0]), best_phi] >= recall_bias[1])
        chosen = np.where(relabel, best_phi, argmax)
    index = {label: i for i, label in enumerate(labels)}
    tokenwise = chosen.copy()
    for t in np.flatnonzero(relabel).tolist():
        label = labels[tokenwise[t]]
        if not label.startswith("I-"):
            continue
        previous = labels[tokenwise[t - 1]] if t > 0 else OUTSIDE
        if previous not in (f"B-{label[2:]}", f"I-{label[2:]}") and f"B-{label[2:]}" in index:
            tokenwise[t] = index[f"B-{label[2:]}"]
    allowed, opens = allowed_transitions(labels)
    if tokenwise.shape[0] == 0 or (opens[tokenwise[0]] and allowed[tokenwise[:-1], tokenwise[1:]].all()):
        return tokenwise
    scores = np.log(np.maximum(m, np.finfo(np.float64).tiny))
    if recall_bias is not None:
        o = outside_index(labels)
        scores[chosen != o, o] = -np.inf
        rows = np.flatnonzero(relabel)
        opener = np.array([index.get(f"B-{lab[2:]}", -1) if lab.startswith("I-") else -1 for lab in labels])
        inner = rows[opener[best_phi[rows]] >= 0]
        scores[inner, opener[best_phi[inner]]] = scores[inner, best_phi[inner]]
    n, n_labels = scores.shape
    transition = np.where(allowed, 0.0, -np.inf)
    columns = np.arange(n_labels)
    back = np.zeros((n, n_labels), dtype=np.intp)
    delta = scores[0] + np.where(opens, 0.0, -np.inf)
    for t in range(1, n):
        candidates = delta[:, None] + transition
        best = candidates.argmax(axis=0)
        top = candidates[best, columns]
        keep = candidates[chosen[t - 1]] == top
        back[t] = np.where(keep, chosen[t - 1], best)
        delta = top + scores[t]
    path = np.empty(n, dtype=np.intp)
    last = int(delta.argmax())
    path[-1] = chosen[-1] if delta[chosen[-1]] == delta[last] else last
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


# The two paths, stage by stage ---------------------------------------------------------------------------

def score_shard(tagger: CRFTagger, docs: Sequence[Document], recall_bias, *, reference: bool) -> tuple[dict, dict]:
    """What ``retrain.score`` computes for ``docs`` (without and with ``recall_bias``), and seconds per stage."""
    labels = list(tagger.labels_)
    seconds = {}
    t0 = time.perf_counter()
    marginals = reference_marginals(tagger, docs) if reference else tagger.predict_marginals(docs)
    seconds["marginals"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    scores = STRATEGY.score_many(marginals, labels.index("O"))
    seconds["strategy"] = time.perf_counter() - t0
    out = {"marginals": marginals, "scores": scores}
    for name, bias in (("pre_annotations", None), ("pre_annotations_biased", recall_bias)):
        t0 = time.perf_counter()
        if reference:
            out[name] = [reference_pre_annotations(d.text, m, labels, bias) for d, m in zip(docs, marginals)]
        else:
            out[name] = pre_annotations_many(tagger.tokens(docs), marginals, labels, recall_bias=bias)
        seconds[name] = time.perf_counter() - t0
    seconds["total"] = seconds["marginals"] + seconds["strategy"] + seconds["pre_annotations_biased"]
    return out, seconds


def rates(n_tokens: int, seconds: dict) -> dict:
    return {stage: round(n_tokens / s) if s > 0 else None for stage, s in seconds.items()}


def pool_shard(size: int, seed: int) -> list[Document]:
    texts = [d.text for d in read_split("dev") + read_split("train")]
    chosen = sorted(np.random.default_rng(seed).choice(len(texts), size=min(size, len(texts)), replace=False).tolist())
    return [Document(f"Registro {i:04d}\n{texts[i]}", (), f"pool-{i:04d}") for i in chosen]


def cold_child(args) -> None:
    """One cold pass in this fresh interpreter: prints seconds per stage."""
    docs = pool_shard(args.shard, args.seed)
    with open(args.model, "rb") as fh:
        blob = fh.read()
    t0 = time.perf_counter()
    tagger = loads(blob, name=args.model)
    seconds = {"unpickle": time.perf_counter() - t0}
    t0 = time.perf_counter()
    tagger.features(docs)
    seconds["features"] = time.perf_counter() - t0
    _, stages = score_shard(tagger, docs, args.bias, reference=args.cold == "reference")
    seconds.update(stages)
    seconds["total"] += seconds["unpickle"] + seconds["features"]
    print(json.dumps(seconds))


def cold(args, which: str) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--cold", which, "--model", args.model,
               "--shard", str(args.shard), "--seed", str(args.seed), "--recall-bias", args.recall_bias]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def same_suggestions(new: list[dict], old: list[dict]) -> tuple[bool, bool, float]:
    """(same spans, same possible misses, largest confidence difference)."""
    spans = missed = True
    worst = 0.0
    for a, b in zip(new, old):
        spans &= [(s["start"], s["end"], s["label"]) for s in a["spans"]] == [
            (s["start"], s["end"], s["label"]) for s in b["spans"]]
        missed &= [m[:2] for m in a["possible_missed"]] == [m[:2] for m in b["possible_missed"]]
        if spans:
            worst = max([worst] + [abs(x["confidence"] - y["confidence"]) for x, y in zip(a["spans"], b["spans"])])
        if missed:
            worst = max([worst] + [abs(x[2] - y[2]) for x, y in zip(a["possible_missed"], b["possible_missed"])])
    return spans, missed, worst


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--shard", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--recall-bias", default="0.999,0.001", help="tau_main,tau_alt")
    parser.add_argument("--cold", choices=("new", "reference"), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.bias = tuple(float(x) for x in args.recall_bias.split(","))
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    except (AttributeError, OSError):
        pass
    if args.cold:
        cold_child(args)
        return
    train = read_split("train", args.train_limit)
    if not train:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return
    model, train_seconds = cached_crf(train)
    args.model = str(model)
    docs = pool_shard(args.shard, args.seed)

    # Cold first (a fresh interpreter per path), then warm in this process: the paths alternate, best of each.
    cold_new, cold_reference = cold(args, "new"), cold(args, "reference")
    tagger = load(model)
    tagger.features(docs)
    results: dict[str, dict] = {}
    best: dict[str, dict[str, float]] = {"new": {}, "reference": {}}
    for _ in range(args.repeats):
        for path in ("new", "reference"):
            results[path], seconds = score_shard(tagger, docs, args.bias, reference=path == "reference")
            best[path] = {stage: min(s, best[path].get(stage, s)) for stage, s in seconds.items()}
    result_new, result_old = results["new"], results["reference"]
    warm_new, warm_reference = best["new"], best["reference"]

    n_tokens = sum(m.shape[0] for m in result_new["marginals"])
    diff = max(float(np.abs(a - b).max()) for a, b in zip(result_new["marginals"], result_old["marginals"]) if a.size)
    order_new = np.argsort(-result_new["scores"], kind="stable")
    order_old = np.argsort(-result_old["scores"], kind="stable")
    plain = same_suggestions(result_new["pre_annotations"], result_old["pre_annotations"])
    biased = same_suggestions(result_new["pre_annotations_biased"], result_old["pre_annotations_biased"])
    out = {
        "bench": "scoring",
        "shard_records": len(docs),
        "shard_tokens": n_tokens,
        "n_labels": len(tagger.labels_),
        "n_attributes": len(tagger.attributes_),
        "train_documents": len(train),
        "train_seconds": None if train_seconds is None else round(train_seconds, 1),
        "recall_bias": list(args.bias),
        "warm_tokens_per_s": rates(n_tokens, warm_new),
        "warm_reference_tokens_per_s": rates(n_tokens, warm_reference),
        "warm_ratio": {k: round(warm_reference[k] / warm_new[k], 2) for k in warm_new},
        "cold_tokens_per_s": rates(n_tokens, cold_new),
        "cold_reference_tokens_per_s": rates(n_tokens, cold_reference),
        "cold_ratio": {k: round(cold_reference[k] / cold_new[k], 2) for k in cold_new},
        "cold_seconds": {k: round(v, 3) for k, v in cold_new.items()},
        "cold_reference_seconds": {k: round(v, 3) for k, v in cold_reference.items()},
        "max_abs_diff_marginals": diff,
        "rows_sum_to_one": bool(all(np.allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-12)
                                    for m in result_new["marginals"] if m.size)),
        "same_ranking": bool(np.array_equal(order_new, order_old)),
        "max_abs_diff_scores": float(np.abs(result_new["scores"] - result_old["scores"]).max()),
        "same_spans": plain[0], "same_possible_missed": plain[1],
        "same_spans_biased": biased[0], "same_possible_missed_biased": biased[1],
        "max_abs_diff_confidence": max(plain[2], biased[2]),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
