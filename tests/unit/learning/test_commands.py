"""The ``evaluate`` and ``simulate`` management commands, on small brat corpora, without a database.

No test here is marked ``django_db``: pytest-django refuses database access, so a command that touched
the database would fail.
"""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from corpus.formats import write_corpus
from corpus.types import Document, Span

NAMES = ["Juan", "Ana", "Luis", "Eva", "Rosa", "Pablo", "Marta", "Jorge"]
CITIES = ["Madrid", "Lugo", "Soria", "Cadiz", "Vigo"]


def corpus(n: int, offset: int = 0) -> list[Document]:
    docs = []
    for i in range(n):
        name, city = NAMES[(i + offset) % len(NAMES)], CITIES[(i + offset) % len(CITIES)]
        text = f"{name} vive en {city}.\nAcude a consulta {i}."
        city_at = text.index(city)
        spans = (Span(0, len(name), "NAME"), Span(city_at, city_at + len(city), "LOC"))
        docs.append(Document(text, spans, f"doc{offset}_{i:02d}"))
    return docs


@pytest.fixture
def folders(tmp_path):
    train, evaluation, unlabelled = tmp_path / "train", tmp_path / "eval", tmp_path / "unlabelled"
    write_corpus(corpus(16), train, "brat")
    write_corpus(corpus(6, offset=3), evaluation, "brat")
    write_corpus([Document(d.text, (), d.name) for d in corpus(6, offset=5)], unlabelled, "brat")
    return train, evaluation, unlabelled


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_evaluate_prints_one_json_line(folders):
    train, evaluation, _ = folders
    report = run("evaluate", "--train", str(train), "--eval", str(evaluation), "--tagger", "unigram")
    # Every name and city of the evaluation set occurs in training with a single label.
    assert report["entity"] == {"p": 1.0, "r": 1.0, "f1": 1.0}
    assert report["token"]["f1"] == 1.0 and report["leakage"] == 0.0
    assert report["per_type"]["NAME"]["support"] == 6 and report["per_type"]["LOC"]["support"] == 6
    assert report["eval_tokens"] == sum(len(d.text.split()) + 2 for d in corpus(6, offset=3))
    assert report["train_docs"] == 16 and report["dev_docs"] == 0
    assert report["train_seconds"] >= 0


def test_evaluate_with_recall_bias_and_self_training(folders):
    train, evaluation, unlabelled = folders
    report = run(
        "evaluate", "--train", str(train), "--eval", str(evaluation), "--tagger", "unigram",
        "--recall-bias", "4", "--self-train", "--unlabelled", str(unlabelled), "--seed", "3",
    )
    assert report["train_docs"] == 13 and report["dev_docs"] == 3  # 20% of 16 held out
    assert report["recall_bias"]["beta"] == 4.0
    assert report["recall_bias"]["tau_main"] in (0.99999, 0.9999, 0.999, 0.99, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6)
    assert report["self_training"]["unlabelled_docs"] == 6
    assert report["self_training"]["stopped"] in ("pool-empty", "nothing-selected", "dev-f1-dropped")


def test_evaluate_crf_with_parameters(folders):
    train, evaluation, _ = folders
    report = run(
        "evaluate", "--train", str(train), "--eval", str(evaluation), "--tagger", "crf",
        "--param", "max_iterations=20",
    )
    assert report["tagger_params"] == {"max_iterations": 20}
    assert 0.0 <= report["entity"]["f1"] <= 1.0


def test_evaluate_errors(folders, tmp_path):
    train, evaluation, _ = folders
    with pytest.raises(CommandError, match="--self-train needs --unlabelled"):
        call_command("evaluate", "--train", str(train), "--eval", str(evaluation), "--self-train")
    with pytest.raises(CommandError, match="does not exist"):
        call_command("evaluate", "--train", str(tmp_path / "nowhere"), "--eval", str(evaluation))
    with pytest.raises(CommandError, match="takes no parameter"):
        call_command("evaluate", "--train", str(train), "--eval", str(evaluation), "--param", "depth=3")


def test_simulate_writes_results_and_plot(folders, tmp_path):
    train, evaluation, _ = folders
    out, plot = tmp_path / "results.json", tmp_path / "curves.png"
    summary = run(
        "simulate", "--train", str(train), "--eval", str(evaluation), "--tagger", "unigram",
        "--strategy", "random", "--strategy", "LCUB_6", "--strategy", "roi:nc_fn=0.2,nc_fp=0.1,c_t=0.004",
        "--batch", "3", "--initial", "2", "--iterations", "3", "--runs", "2", "--seed", "0",
        "--out", str(out), "--plot", str(plot),
    )
    results = json.loads(out.read_text())
    names = ["random", "LCUB_6", "roi(nc_fn=0.2, nc_fp=0.1, c_t=0.004)"]
    assert list(results["strategies"]) == names
    assert results["strategies"]["LCUB_6"]["docs"] == [2, 5, 8, 11]
    assert results["config"]["tagger"] == {"name": "unigram", "params": {}}
    assert summary["strategies"]["random"]["aulc_vs_random"] == 1.0
    assert summary["strategies"]["LCUB_6"]["aulc"] == results["strategies"]["LCUB_6"]["aulc"]
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_simulate_rejects_unknown_strategy(folders, tmp_path):
    train, evaluation, _ = folders
    with pytest.raises(CommandError, match="unknown query strategy"):
        call_command("simulate", "--train", str(train), "--eval", str(evaluation), "--strategy", "smart",
                     "--out", str(tmp_path / "r.json"))
