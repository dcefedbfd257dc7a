"""``manage.py simulate``: replay active learning on an annotated corpus and write the learning curves."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from learning.core.registry import live_params, parse_params, tagger_factory
from learning.core.simulation import plot_results, simulate
from learning.core.strategies import parse_strategy

from .evaluate import add_corpus_and_tagger_arguments, read_or_fail


class Command(BaseCommand):
    help = (
        "Simulate pool-based active learning with the gold standard as oracle: every --strategy starts from "
        "the same random documents per run. Writes the curves to --out and prints a one-line JSON summary. "
        "Never touches the database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_corpus_and_tagger_arguments(parser, train_help="the pool: folder (or file) of gold documents")
        parser.add_argument(
            "--strategy", action="append", required=True, metavar="NAME",
            help="a query strategy (repeatable): random, lc-sum, lc-mean, entropy, LCUB_1..10, ELB_1..5, "
            "ROI_1..3, or a kind with parameters such as roi:nc_fn=0.2,nc_fp=0.1,c_t=0.004",
        )
        parser.add_argument("--batch", type=int, default=10)
        parser.add_argument("--initial", type=int, default=10)
        parser.add_argument("--iterations", type=int, default=10)
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--out", required=True, help="JSON file for the full results")
        parser.add_argument("--plot", help="also draw the mean curves (±sd) to this image file")

    def handle(self, *args, **options):
        try:
            strategies = [parse_strategy(s) for s in options["strategy"]]
            # As the live loop trains (a CRF continues from the previous model; --param warm_start=false refits).
            tagger_params = live_params(options["tagger"], parse_params(options["param"]))
            factory = tagger_factory(options["tagger"], seed=options["seed"], **tagger_params)
        except ValueError as error:
            raise CommandError(str(error)) from error
        fmt = options["format"]
        train = read_or_fail(options["train"], fmt, "--train")
        evaluation = read_or_fail(options["eval"], fmt, "--eval")
        try:
            results = simulate(
                train,
                evaluation,
                tagger_factory=factory,
                strategies=strategies,
                batch=options["batch"],
                initial=options["initial"],
                iterations=options["iterations"],
                runs=options["runs"],
                seed=options["seed"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        results["config"]["tagger"] = {"name": options["tagger"], "params": tagger_params}
        with open(options["out"], "w", encoding="utf-8") as out:
            json.dump(results, out, ensure_ascii=False, indent=1)
        if options["plot"]:
            plot_results(results, options["plot"])
        summary = {
            name: {
                "aulc": curve["aulc"],
                "aulc_vs_random": curve.get("aulc_vs_random"),
                "final_f1": curve["final"]["f1"],
                "docs_to": curve["docs_to"],
            }
            for name, curve in results["strategies"].items()
        }
        self.stdout.write(json.dumps({"strategies": summary, "seconds": results["seconds"], "out": options["out"]}))
