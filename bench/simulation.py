"""Active-learning replay on MEDDOCAN (train as pool, dev as evaluation set) with the CRF.

Random vs LCUB_6 vs ELB_3 vs ROI_2: batch 10, initial 10 random documents (the same per run for every
strategy), 10 iterations, 3 runs. Reports per strategy the area under the mean learning curve (AULC), its
ratio to Random's AULC measured in the same run, the final mean P/R/F1 and the documents needed to reach
F1 0.8/0.85/0.9; plus the wall time. Prints one JSON line.

Options: ``--quick`` (1 run, 5 iterations, CRF max_iterations 30: a few minutes), ``--max-iterations``
(CRF L-BFGS iterations, default 50), ``--runs``, ``--iterations``, ``--out`` (full results JSON),
``--plot`` (curves image).
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from corpus.formats import read_corpus  # noqa: E402
from learning.core.registry import tagger_factory  # noqa: E402
from learning.core.simulation import plot_results, simulate  # noqa: E402

MEDDOCAN = Path(REPO_ROOT).parent / "shared" / "datasets" / "meddocan"
STRATEGIES = ["random", "LCUB_6", "ELB_3", "ROI_2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run, 5 iterations, CRF max_iterations 30")
    parser.add_argument("--max-iterations", type=int, default=None, help="CRF L-BFGS iterations (default 50)")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--initial", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the full results (curves per run) to this JSON file")
    parser.add_argument("--plot", help="draw the mean curves (±sd) to this image file")
    args = parser.parse_args()

    runs = args.runs or (1 if args.quick else 3)
    iterations = args.iterations if args.iterations is not None else (5 if args.quick else 10)
    max_iterations = args.max_iterations or (30 if args.quick else 50)

    started = time.perf_counter()
    train = read_corpus(MEDDOCAN / "train", "brat")
    evaluation = read_corpus(MEDDOCAN / "dev", "brat")
    results = simulate(
        train,
        evaluation,
        tagger_factory=tagger_factory("crf", max_iterations=max_iterations),
        strategies=STRATEGIES,
        batch=args.batch,
        initial=args.initial,
        iterations=iterations,
        runs=runs,
        seed=args.seed,
    )
    wall = time.perf_counter() - started
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(results, out, ensure_ascii=False, indent=1)
    if args.plot:
        plot_results(results, args.plot, title=f"MEDDOCAN dev, CRF, batch {args.batch}, {runs} runs")

    summary = {}
    for name, curve in results["strategies"].items():
        summary[name] = {
            "aulc": round(curve["aulc"], 4),
            "aulc_vs_random": round(curve["aulc_vs_random"], 4),
            "final_docs": curve["final"]["docs"],
            "final_f1": round(curve["final"]["f1"], 4),
            "final_f1_sd": round(curve["f1_sd"][-1], 4),
            "final_precision": round(curve["final"]["precision"], 4),
            "final_recall": round(curve["final"]["recall"], 4),
            "first_f1": round(curve["f1_mean"][0], 4),
            "docs_to": curve["docs_to"],
        }
    print(json.dumps({
        "benchmark": "simulation",
        "corpus": "meddocan train (pool, 500) -> dev (evaluation, 250)",
        "tagger": {"name": "crf", "max_iterations": max_iterations},
        "batch": args.batch,
        "initial": args.initial,
        "iterations": iterations,
        "runs": runs,
        "seed": args.seed,
        "quick": args.quick,
        "strategies": summary,
        "reference": "random",
        "wall_seconds": round(wall, 1),
    }))


if __name__ == "__main__":
    main()
