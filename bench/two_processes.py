"""How much more scoring two processes do than one on this machine, outside the loop: the throughput of the
scoring's own work (a CRF's marginals, the query strategy's scores and the suggestions of two sets of 250
MEDDOCAN records, dev then train, one after the other, each assembled from the compact features its process
keeps, as a shard of the pool is; BLAS on one thread) in 2 processes at once, as a ratio of 1 process alone.

No database, broker or worker takes part, and nothing waits on another process: the ratio is what the
machine's cores and memory allow the scoring. The loop's 2-worker scoring speed-up can only reach it where
the shards' reads and writes of the database cost nothing, and the whole-loop speed-up can reach it only
if training took no time. ``bench/loop.py`` reports it beside its speed-ups, measured in the same run.

Each process reads the same CRF (``bench/loop.py`` passes its loop's current model; alone, this script fits
one with crfsuite on ``--gold`` MEDDOCAN train documents for ``--iterations`` iterations) from a file sealed
with a key of the run's own, and scores both sets once to fill its feature cache. Then, ``--rounds`` times,
one of the two processes scores them ``--repeats`` times alone, and then both do at once. Prints one JSON
line: the median seconds of one scoring alone and of each of the two beside each other, and the ratio of the
summed throughputs (2 processes over 1) from them.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import secrets  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MEDDOCAN = ROOT.parent / "shared" / "datasets" / "meddocan"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _score(model: Path, key: bytes, which: int, barrier, results, repeats: int, records: int, rounds: int) -> None:
    """Process ``which`` of two: read the model and warm up; then per round, first process 0 scores alone while
    process 1 waits, then both score at once. Puts ``(which, round, "alone" | "pair", seconds)``."""
    from corpus.formats import read_corpus
    from learning.core import artifacts
    from learning.core.features import FeatureCache
    from learning.core.pre_annotation import pre_annotations_many
    from learning.core.strategies import get_strategy

    tagger = artifacts.read(model, key=key)  # unpickled only once its tag checks out
    sets = [read_corpus(MEDDOCAN / "dev", "brat")[:records], read_corpus(MEDDOCAN / "train", "brat")[:records]]
    # A cache whose whole documents hold one set at most: each scoring assembles its documents from the compact
    # features, as a shard of the pool does, and reads them whole the second time (for the suggestions).
    cache = tagger.feature_cache = FeatureCache()
    cache.max_recent_tokens = max(sum(len(tokens) for tokens in tagger.tokens(documents)) for documents in sets)
    strategy = get_strategy("LCUB_6")
    labels = list(tagger.labels_)

    def timed() -> float:
        started = time.perf_counter()
        for _ in range(repeats):
            for documents in sets:
                marginals = tagger.predict_marginals(documents)
                strategy.score_many(marginals, labels.index("O"))
                pre_annotations_many(tagger.tokens(documents), marginals, labels)
        return time.perf_counter() - started

    timed()
    for round_ in range(rounds):
        barrier.wait()
        if which == 0:
            results.put((which, round_, "alone", timed()))
        barrier.wait()
        results.put((which, round_, "pair", timed()))


def two_process_ratio(tagger, *, repeats: int = 1, records: int = 250, rounds: int = 9) -> dict:
    """Two fresh processes (spawned: no lock or thread of this one's) score with ``tagger``, which they read
    from a sealed file (``learning.core.artifacts``, a key of this call's own) in a private temporary folder;
    per round, one of them alone, then both at once. ``ratio`` is the pair's summed throughput over the one's,
    from the medians of the rounds' seconds (2.0 when the second core adds as much as the first). Many short
    rounds, alternating in the same two processes, keep a shared machine's changes of speed, which come and go
    within seconds, out of the comparison as far as possible."""
    from learning.core import artifacts

    key = secrets.token_bytes(32)
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    with tempfile.TemporaryDirectory(prefix="deidloop-two-processes-") as folder:
        model = artifacts.write(Path(folder) / "model.pickle", tagger, key=key)
        workers = [context.Process(target=_score,
                                   args=(model, key, which, barrier, results, repeats, records, rounds))
                   for which in range(2)]
        for worker in workers:
            worker.start()
        alone: list[float] = []
        pair: dict[int, list[float]] = {0: [], 1: []}
        for _ in range(3 * rounds):
            which, _, what, seconds = results.get(timeout=900)
            (alone if what == "alone" else pair[which]).append(seconds)
        for worker in workers:
            worker.join()
            if worker.exitcode != 0:
                raise RuntimeError(f"a scoring process exited with status {worker.exitcode}")
    one = statistics.median(alone)
    two = [statistics.median(pair[which]) for which in (0, 1)]
    return {"records": records, "repeats": repeats, "rounds": rounds,
            "one_process_seconds": round(one, 3), "two_processes_seconds": [round(s, 3) for s in two],
            "ratio": round(sum(one / s for s in two), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="scorings per process and round (default 1)")
    parser.add_argument("--records", type=int, default=250, help="records in each set (default 250)")
    parser.add_argument("--rounds", type=int, default=9, help="times 1 and then 2 processes are measured")
    parser.add_argument("--gold", type=int, default=100, help="MEDDOCAN train documents the CRF is fitted on")
    parser.add_argument("--iterations", type=int, default=20, help="crfsuite's iterations for that fit")
    args = parser.parse_args()
    from corpus.formats import read_corpus
    from learning.core.registry import make_tagger

    tagger = make_tagger("crf", seed=0, max_iterations=args.iterations)
    tagger.fit(read_corpus(MEDDOCAN / "train", "brat")[: args.gold])
    figures = two_process_ratio(tagger, repeats=args.repeats, records=args.records, rounds=args.rounds)
    print(json.dumps({"benchmark": "two_processes", "cpus": os.cpu_count(), "gold": args.gold,
                      "iterations": args.iterations, **figures}))


if __name__ == "__main__":
    main()
