"""What keeping models in PostgreSQL costs a retrain: the bytes each worker process reads, and the seconds to
write and read a real model in the PostgreSQL artifact store against the local one (the reference), measured in
the same run.

The model is a CRF trained on MEDDOCAN train (500 records; bench/model_cache.py keeps it between runs), sealed
as the loop seals it (pickle + HMAC tag). A retrain writes its model once; every worker process that scores a
shard reads it once (``learning.services.model_store.load_model`` keeps it for the next shard), so the bytes
moved per retrain are the sealed size × (1 + worker processes). ``--repeat`` writes and reads are timed, each
read verified and unpickled as scoring does. Prints one JSON line.

    .venv/bin/python bench/artifact_store.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

from django_env import SHARED, setup_scratch_database


def _timed(work, repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="worker processes that each read the model")
    args = parser.parse_args()
    setup_scratch_database("deidloop_bench_artifacts")

    from annotator.artifact_store import LocalStore, PostgresStore
    from corpus.formats import read_corpus
    from learning.core import artifacts
    from model_cache import cached_crf, load

    path, _ = cached_crf(read_corpus(SHARED / "meddocan" / "train", "brat"))
    blob = artifacts.seal(load(path), key=b"bench key")
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, store in (("local", LocalStore(folder)), ("postgres", PostgresStore())):
            write = _timed(lambda: store.write("models/bench.pickle", blob), args.repeat)
            read = _timed(lambda: artifacts.unseal(store.read("models/bench.pickle"), key=b"bench key"), args.repeat)
            figures[name] = {"write_s": round(write, 4), "read_and_unseal_s": round(read, 4)}
    print(json.dumps({
        "benchmark": "artifact_store",
        "model": "CRF, MEDDOCAN train (500 records)",
        "model_bytes": len(blob),
        "worker_processes": args.workers,
        "bytes_moved_per_retrain": len(blob) * (1 + args.workers),
        "repeat": args.repeat,
        "stores": figures,
        "reference": "local store, same run",
        "ratios": {"write_postgres_over_local": round(figures["postgres"]["write_s"] / figures["local"]["write_s"], 2),
                   "read_postgres_over_local": round(figures["postgres"]["read_and_unseal_s"]
                                                     / figures["local"]["read_and_unseal_s"], 2)},
    }))


if __name__ == "__main__":
    main()
