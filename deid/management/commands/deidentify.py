from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from deid.services.deidentify import deidentify_path
from deid.services.exports import report_path_for
from deid.services.policy import POLICY_CHOICES, DeidError


class Command(BaseCommand):
    help = ("De-identify text with the project's current model: IN is a .txt file, a folder of .txt files (or a "
            "brat folder: its .ann files are ignored) or a .jsonl file (a text per line); OUT has the same form, "
            "with a report.json beside it.")

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, metavar="IN")
        parser.add_argument("out", type=Path, metavar="OUT")
        parser.add_argument("--project", required=True)
        parser.add_argument("--policy", choices=POLICY_CHOICES, default="project",
                            help="one strategy for every label, or the project's saved policy (the default)")
        parser.add_argument("--recall-bias", type=float, default=None, metavar="BETA",
                            help="find more PHI at the cost of precision: thresholds tuned for F_BETA (ALGORITHMS.md "
                                 "§3); by default the model's own")

    def handle(self, *args, source: Path, out: Path, project: str, policy: str, recall_bias, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"there is no project named {project!r}")
        try:
            report = deidentify_path(project=target, source=source, out=out, policy=policy, recall_bias=recall_bias)
        except DeidError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"de-identified {report['documents']} documents into {out} ({policy}); "
            f"{report['to_review_total']} spans to review; report in {report_path_for(out)}"
        )
