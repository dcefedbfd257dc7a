"""``manage.py evaluate``: train a tagger on one corpus, score it on another, print one JSON line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from corpus.formats import FORMATS, FormatError, read_corpus
from learning.core.registry import TAGGERS, parse_params, tagger_factory
from learning.core.training import TUNE_ON_DEV, train_and_evaluate
from corpus.types import Document


def read_or_fail(path: str, fmt: str, option: str) -> list[Document]:
    """The documents at ``path``, or a :class:`CommandError` a person can act on."""
    if not Path(path).exists():
        raise CommandError(f"{option}: {path} does not exist")
    try:
        docs = read_corpus(path, fmt)
    except (FormatError, ValueError) as error:
        raise CommandError(f"{option}: {error}") from error
    if not docs:
        raise CommandError(f"{option}: no {fmt} documents found in {path}")
    return docs


def add_corpus_and_tagger_arguments(parser, *, train_help: str) -> None:
    """The arguments ``evaluate`` and ``simulate`` share: the corpora, their format, the tagger."""
    parser.add_argument("--train", required=True, help=train_help)
    parser.add_argument("--eval", required=True, help="folder (or file) of gold evaluation documents")
    parser.add_argument("--format", default="brat", choices=FORMATS, help="corpus format (default brat)")
    parser.add_argument("--tagger", default="crf", choices=sorted(TAGGERS), help="tagger (default crf)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE",
        help="a tagger parameter, e.g. --param max_iterations=50 (repeatable; VALUE read as JSON if it can be)",
    )


class Command(BaseCommand):
    help = (
        "Train a tagger on --train and score it on --eval (entity and token P/R/F1, leakage, per type). "
        "Prints one JSON line. Never touches the database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_corpus_and_tagger_arguments(parser, train_help="folder (or file) of gold training documents")
        parser.add_argument(
            "--recall-bias", type=float, metavar="BETA", default=None,
            help="tune the recall-bias thresholds for token F_BETA on a development split and apply them",
        )
        parser.add_argument("--self-train", action="store_true", help="self-train on --unlabelled documents")
        parser.add_argument("--unlabelled", help="folder (or file) of unlabelled documents for --self-train")
        parser.add_argument(
            "--dev-fraction", type=float, default=0.2,
            help="share of the training documents held out as development set when one is needed (default 0.2)",
        )
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **options):
        if options["self_train"] and not options["unlabelled"]:
            raise CommandError("--self-train needs --unlabelled DIR")
        if options["unlabelled"] and not options["self_train"]:
            raise CommandError("--unlabelled is only used with --self-train")
        fmt = options["format"]
        train = read_or_fail(options["train"], fmt, "--train")
        evaluation = read_or_fail(options["eval"], fmt, "--eval")
        unlabelled = read_or_fail(options["unlabelled"], fmt, "--unlabelled") if options["self_train"] else None
        try:
            report = evaluation_report(
                train,
                evaluation,
                tagger=options["tagger"],
                tagger_params=parse_params(options["param"]),
                seed=options["seed"],
                recall_bias_beta=options["recall_bias"],
                unlabelled_docs=unlabelled,
                dev_fraction=options["dev_fraction"],
            )
        except (ValueError, FormatError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(report, ensure_ascii=False))


def evaluation_report(
    train_docs: list[Document],
    eval_docs: list[Document],
    *,
    tagger: str,
    tagger_params: dict[str, Any] | None = None,
    seed: int = 0,
    recall_bias_beta: float | None = None,
    unlabelled_docs: list[Document] | None = None,
    dev_fraction: float = 0.2,
) -> dict[str, Any]:
    """Scores of :func:`learning.core.metrics.evaluate` plus timings and what was chosen on the way.

    With a recall bias, the scores are those of the biased decoding, its thresholds tuned on a development
    set held out of ``train_docs``.
    """
    model = train_and_evaluate(
        train_docs, eval_docs, tagger_factory=tagger_factory(tagger, seed=seed, **(tagger_params or {})),
        seed=seed, recall_bias_beta=recall_bias_beta, recall_bias_tuning=TUNE_ON_DEV,
        unlabelled_docs=unlabelled_docs, dev_fraction=dev_fraction,
    )
    report: dict[str, Any] = {
        "tagger": tagger,
        "tagger_params": dict(tagger_params or {}),
        "seed": seed,
        "train_docs": len(model.train_documents),
        "dev_docs": len(model.dev_documents),
        "eval_docs": len(eval_docs),
    }
    outcome = model.self_training
    if outcome is not None:
        report["self_training"] = {
            "unlabelled_docs": len(unlabelled_docs or []),
            "silver_sentences": len(outcome.silver),
            "iterations": len(outcome.history) - 1,
            "best_iteration": outcome.best_iteration,
            "stopped": outcome.stopped,
            "dev_f1": [h["dev_f1"] for h in outcome.history],
        }
    report["train_seconds"] = model.train_seconds
    if model.recall_bias is not None:
        report["recall_bias"] = {
            "beta": recall_bias_beta,
            "tau_main": model.recall_bias.tau_main,
            "tau_alt": model.recall_bias.tau_alt,
            "dev_f_beta": model.recall_bias.score,
        }
    report["predict_seconds"] = model.predict_seconds
    scores = model.recall_bias_metrics if model.recall_bias_metrics is not None else model.metrics
    return {**scores, **report}
