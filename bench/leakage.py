"""Leakage (gold PHI tokens shown as non-PHI) against binary token precision on MEDDOCAN dev, for

- ``crf_viterbi``: the CRF's own Viterbi path (``tagger.predict``), and ``crf_marginals``: the marginals
  decoded without a recall bias (``learning.core.decoding.decode``);
- ``global_bias``: one recall-bias pair tuned for F_β (β = 4 by default) on the grid of ALGORITHMS.md §3 —
  the reference; ``fine_grid_bias``: the same on the project's grid (§3's and four τ_main values between
  0.999 and 0.99);
- ``per_label_bias``: a pair per PHI type, each maximising its own F_β
  (``learning.core.recall_bias.tune_recall_bias_per_label``), and ``per_label_overall``: a pair per type
  chosen together for the overall F_β;
- each of the three with document-level consistency on top (``learning.core.consistency``: every mention
  in a record of a string tagged PHI in it, one label per string): ``..._consistency``;
- ``crf_marginals_shown``, ``global_bias_shown`` and ``fine_grid_bias_shown``: exactly what annotators are
  shown and exports conceal —
  the pre-annotations (``learning.core.pre_annotation.pre_annotations``, without and with the global pair)
  completed from the record (``complete_suggestions``: consistency, then sure structured-PHI patterns);
- ``lexicon_...``: a second CRF, with the gold lexicon (``learning.core.lexicon``, the tagger's default), its
  Viterbi path, what it shows without a bias, and per β its global pair (``lexicon_global_bias``) and what it
  shows with it (``..._shown``);
- ``lexicon_type_betas_shown``: the same CRF with a β per type, as a project sets it: the types whose false
  alarms cost an annotator least (dates, ages, IDs and numbers, e-mail, URL, IP: ``CHEAP_TYPES``) at
  ``--cheap-beta`` (20 by default), every other at β, a pair per type (``tune_recall_bias_per_label``, as the
  live retrain tunes it), and what it shows.

Every row has its entity precision per type (``entity_p_by_type``), so what a higher β for some types costs
the precision of the others (names) can be read beside the leakage it buys, and its leaked and gold tokens per
type (``leaked_of_gold_by_type``): on MEDDOCAN dev PROFESION has 9 gold tokens and OTROS_SUJETO_ASISTENCIA 16.

The reference CRF (default parameters, but without the gold lexicon) is trained once on MEDDOCAN train minus
a tuning part (``--tune-fraction`` of train, drawn with ``--seed``); every threshold is tuned on that part,
never on dev. Per row: leakage, token
precision/recall (binary), entity F1, leakage per gold type and the ratios to the reference of the same
run. ``frontier`` repeats the biased rows for other β, so rows can be compared at equal precision. ``best``
is the row with the lowest leakage among those with dev token precision ≥ ``--precision-floor``; ``goal``
says whether a row reaches leakage ≤ 0.5 % at that precision.

Prints one JSON line. Options: --train-limit (documents of train, for quick runs), --beta, --frontier-betas,
--cheap-beta.
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
from learning.core.consistency import consistent_spans  # noqa: E402
from learning.core.decoding import decoded_spans  # noqa: E402
from corpus.span_json import read_span  # noqa: E402
from learning.core.metrics import evaluate, leakage_by_type  # noqa: E402
from learning.core.pre_annotation import complete_suggestions, pre_annotations  # noqa: E402
from learning.core.recall_bias import SECTION_3_TAU_MAIN, tune_recall_bias, tune_recall_bias_per_label  # noqa: E402
from learning.core.taggers.base import gold_tags  # noqa: E402
from learning.core.taggers.crf import CRFTagger  # noqa: E402
from learning.core.training import split_dev  # noqa: E402
from tests.unit.core.meddocan import MEDDOCAN_DIR, read_split  # noqa: E402

LEAKAGE_GOAL = 0.005
#: MEDDOCAN types flagged wrongly at little cost: a date, an age or a number is quick to reject.
CHEAP_TYPES = ("FECHAS", "EDAD_SUJETO_ASISTENCIA", "CORREO_ELECTRONICO", "DIRECCION_IP", "URL_WEB")
CHEAP_PREFIXES = ("ID_", "IDENTIF_", "NUMERO_", "OTRO_NUMERO")


def type_betas(labels, beta: float, cheap_beta: float) -> dict[str, float]:
    types = sorted({label[2:] for label in labels if label != "O"})
    return {kind: cheap_beta if kind in CHEAP_TYPES or kind.startswith(CHEAP_PREFIXES) else beta for kind in types}


def figures(docs, predicted, tokens, seconds: float) -> dict:
    scores = evaluate(docs, predicted, tokens)
    by_type = leakage_by_type(docs, predicted, tokens)
    return {
        "leakage": round(scores["leakage"], 5), "leaked_tokens": scores["counts"]["token_gold"]
        - scores["counts"]["token_tp"], "token_p": round(scores["token"]["p"], 4),
        "token_r": round(scores["token"]["r"], 4), "entity_f1": round(scores["entity"]["f1"], 4),
        "leakage_by_type": {kind: round(v["leakage"], 4) for kind, v in by_type.items()},
        # [leaked, gold] tokens per type: a rare type's rate moves by a whole token's share.
        "leaked_of_gold_by_type": {kind: [v["leaked"], v["gold"]] for kind, v in by_type.items()},
        "entity_p_by_type": {kind: round(v["p"], 4) for kind, v in scores["per_type"].items()},
        "seconds": round(seconds, 2),
    }


def decode_all(tokens, marginals, labels, thresholds):
    return [decoded_spans(t, m, labels, thresholds) for t, m in zip(tokens, marginals)]


def with_consistency(tokens, marginals, labels, predicted, min_seed_confidence: float):
    return [[s.span for s in consistent_spans(t, spans, marginals=m, labels=labels,
                                              min_seed_confidence=min_seed_confidence)]
            for t, m, spans in zip(tokens, marginals, predicted)]


def shown_spans(docs, tokens, marginals, labels, thresholds):
    """The spans annotators are shown (and exports conceal) for each document."""
    schema = sorted({label[2:] for label in labels if label != "O"})
    out = []
    for doc, t, m in zip(docs, tokens, marginals):
        found = complete_suggestions(doc.text, t, pre_annotations(t, m, labels, recall_bias=thresholds),
                                     schema_labels=schema, language="es")
        out.append([read_span(item) for item in found["spans"]])
    return out


def lexicon_rows(tagger, tuning, dev, tokens, betas: list[float], cheap_beta: float) -> tuple[dict, dict]:
    """For a CRF fitted with the gold lexicon: its unbiased rows, and per β its global-bias rows and its rows
    with a β per type (thresholds tuned on the tuning part, as the reference's)."""
    labels = list(tagger.labels_)
    tuning_gold = [gold_tags(d, tokenize(d.text)) for d in tuning]
    tuning_marginals = tagger.predict_marginals(tuning)
    marginals = tagger.predict_marginals(dev)
    rows = {}
    t0 = time.perf_counter()
    rows["lexicon_viterbi"] = figures(dev, tagger.predict(dev), tokens, time.perf_counter() - t0)
    t0 = time.perf_counter()
    rows["lexicon_marginals_shown"] = figures(dev, shown_spans(dev, tokens, marginals, labels, None), tokens,
                                              time.perf_counter() - t0)
    by_beta = {}
    for beta in betas:
        single = tune_recall_bias(tuning_marginals, tuning_gold, labels, beta)
        thresholds = (single.tau_main, single.tau_alt)
        block = {}
        t0 = time.perf_counter()
        block["lexicon_global_bias"] = figures(dev, decode_all(tokens, marginals, labels, thresholds), tokens,
                                               time.perf_counter() - t0)
        t0 = time.perf_counter()
        block["lexicon_global_bias_shown"] = figures(dev, shown_spans(dev, tokens, marginals, labels, thresholds),
                                                     tokens, time.perf_counter() - t0)
        per_type = tune_recall_bias_per_label(tuning_marginals, tuning_gold, labels,
                                              type_betas(labels, beta, cheap_beta)).thresholds
        t0 = time.perf_counter()
        block["lexicon_type_betas_shown"] = figures(dev, shown_spans(dev, tokens, marginals, labels, per_type),
                                                    tokens, time.perf_counter() - t0)
        by_beta[f"{beta:g}"] = block
    return rows, by_beta


def tuning_split(args):
    """(train, tuning, dev) of MEDDOCAN: ``--tune-fraction`` of train (drawn with ``--seed``) to tune thresholds
    on, the rest to train on; None, having printed why, when MEDDOCAN is not there."""
    train_all, dev = read_split("train", args.train_limit), read_split("dev")
    if not train_all or not dev:
        print(json.dumps({"skipped": f"MEDDOCAN not found under {MEDDOCAN_DIR}"}))
        return None
    train, tuning = split_dev(train_all, args.tune_fraction, args.seed)
    return train, tuning, dev


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-limit", type=int, default=None)
    parser.add_argument("--tune-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beta", type=float, default=4.0)
    parser.add_argument("--frontier-betas", default="2,3,6,8")
    parser.add_argument("--min-seed-confidence", type=float, default=0.5)
    parser.add_argument("--precision-floor", type=float, default=0.90)
    parser.add_argument("--cheap-beta", type=float, default=20.0)
    args = parser.parse_args()
    started = time.perf_counter()
    split = tuning_split(args)
    if split is None:
        return
    train, tuning, dev = split
    t0 = time.perf_counter()
    tagger = CRFTagger(gold_lexicon=False).fit(train)
    train_s = time.perf_counter() - t0
    labels = list(tagger.labels_)
    tuning_tokens = [tokenize(d.text) for d in tuning]
    tuning_gold = [gold_tags(d, t) for d, t in zip(tuning, tuning_tokens)]
    tuning_marginals = tagger.predict_marginals(tuning)
    tokens = [tokenize(d.text) for d in dev]
    marginals = tagger.predict_marginals(dev)

    def tune(beta: float) -> dict:
        """Per row name: (the thresholds the decoder takes, what the tuning chose)."""
        single = tune_recall_bias(tuning_marginals, tuning_gold, labels, beta, tau_main_grid=SECTION_3_TAU_MAIN)
        fine = tune_recall_bias(tuning_marginals, tuning_gold, labels, beta)
        per_label = tune_recall_bias_per_label(tuning_marginals, tuning_gold, labels, beta)
        overall = tune_recall_bias_per_label(tuning_marginals, tuning_gold, labels, beta, objective="overall")
        return {"global_bias": ((single.tau_main, single.tau_alt), single),
                "fine_grid_bias": ((fine.tau_main, fine.tau_alt), fine),
                "per_label_bias": (per_label.thresholds, per_label),
                "per_label_overall": (overall.thresholds, overall)}

    def rows_for(tuned: dict) -> dict:
        rows = {}
        for name, (thresholds, _) in tuned.items():
            t0 = time.perf_counter()
            predicted = decode_all(tokens, marginals, labels, thresholds)
            rows[name] = figures(dev, predicted, tokens, time.perf_counter() - t0)
            t0 = time.perf_counter()
            consistent = with_consistency(tokens, marginals, labels, predicted, args.min_seed_confidence)
            rows[f"{name}_consistency"] = figures(dev, consistent, tokens, time.perf_counter() - t0)
            if name in ("global_bias", "fine_grid_bias"):
                t0 = time.perf_counter()
                rows[f"{name}_shown"] = figures(dev, shown_spans(dev, tokens, marginals, labels, thresholds),
                                                    tokens, time.perf_counter() - t0)
        return rows

    result: dict = {
        "bench": "leakage", "train_docs": len(train), "tuning_docs": len(tuning), "eval_docs": len(dev),
        "beta": args.beta, "train_seconds": round(train_s, 1),
    }
    rows: dict = {}
    t0 = time.perf_counter()
    rows["crf_viterbi"] = figures(dev, tagger.predict(dev), tokens, time.perf_counter() - t0)
    t0 = time.perf_counter()
    unbiased = decode_all(tokens, marginals, labels, None)
    rows["crf_marginals"] = figures(dev, unbiased, tokens, time.perf_counter() - t0)
    t0 = time.perf_counter()
    rows["crf_marginals_consistency"] = figures(
        dev, with_consistency(tokens, marginals, labels, unbiased, args.min_seed_confidence), tokens,
        time.perf_counter() - t0)
    t0 = time.perf_counter()
    rows["crf_marginals_shown"] = figures(dev, shown_spans(dev, tokens, marginals, labels, None), tokens,
                                          time.perf_counter() - t0)
    tuned = tune(args.beta)
    rows.update(rows_for(tuned))
    t0 = time.perf_counter()
    with_lexicon = CRFTagger(gold_lexicon=True).fit(train)
    result["lexicon"] = {"train_seconds": round(time.perf_counter() - t0, 1), "entries": len(with_lexicon.lexicon_)}
    betas = sorted({args.beta, *(float(b) for b in args.frontier_betas.split(",") if b)})
    lexicon_main, lexicon_frontier = lexicon_rows(with_lexicon, tuning, dev, tokens, betas, args.cheap_beta)
    rows.update(lexicon_main)
    rows.update(lexicon_frontier[f"{args.beta:g}"])
    reference = rows["global_bias"]
    for row in rows.values():
        row["ratio_leakage"] = ratio(row["leakage"], reference["leakage"])
        row["ratio_token_p"] = ratio(row["token_p"], reference["token_p"])
    result["eval_phi_tokens"] = evaluate(dev, unbiased, tokens)["counts"]["token_gold"]
    result["rows"] = rows
    result["thresholds"] = {
        **{name: {"tau_main": tuned[name][1].tau_main, "tau_alt": tuned[name][1].tau_alt,
                  "tuning_f_beta": round(tuned[name][1].score, 4)} for name in ("global_bias", "fine_grid_bias")},
        **{name: {"tuning_f_beta": round(t.score, 4), "tuning_p": round(t.precision, 4),
                  "tuning_r": round(t.recall, 4),
                  "labels": {kind: {"tau_main": v.tau_main, "tau_alt": v.tau_alt, "tuning_p": round(v.precision, 4),
                                    "tuning_r": round(v.recall, 4), "tuning_gold_tokens": v.gold_tokens,
                                    "tuned": v.tuned} for kind, v in t.by_type.items()}}
           for name, (_, t) in tuned.items() if name not in ("global_bias", "fine_grid_bias")},
    }
    frontier: dict = {}
    for beta in [float(b) for b in args.frontier_betas.split(",") if b]:
        frontier[f"{beta:g}"] = {name: {k: row[k] for k in ("leakage", "token_p", "entity_f1")}
                                 for name, row in rows_for(tune(beta)).items()}
    frontier[f"{args.beta:g}"] = {name: {k: rows[name][k] for k in ("leakage", "token_p", "entity_f1")}
                                  for name in rows if name.startswith(("global", "fine", "per_label"))}
    for beta, block in lexicon_frontier.items():
        frontier.setdefault(beta, {}).update(
            {name: {k: row[k] for k in ("leakage", "token_p", "entity_f1")} for name, row in block.items()})
    result["frontier"] = dict(sorted(frontier.items(), key=lambda kv: float(kv[0])))
    eligible = {name: row for name, row in rows.items() if row["token_p"] >= args.precision_floor}
    best = min(eligible, key=lambda name: eligible[name]["leakage"]) if eligible else None
    result["best"] = {"row": best, "precision_floor": args.precision_floor,
                      "leakage": eligible[best]["leakage"] if best else None,
                      "token_p": eligible[best]["token_p"] if best else None}
    reached = [f"beta {beta}: {name}" for beta, block in result["frontier"].items() for name, row in block.items()
               if row["leakage"] <= LEAKAGE_GOAL and row["token_p"] >= args.precision_floor]
    result["goal"] = {"leakage_at_most": LEAKAGE_GOAL, "token_p_at_least": args.precision_floor,
                      "reached_by": reached}
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
