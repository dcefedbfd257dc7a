from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from annotator.services.exports import EXPORT_FORMATS
from corpus.formats.errors import FormatError
from deid.services.exports import EXPORT_CONCEALMENTS, export_deidentified
from deid.services.policy import DeidError


class Command(BaseCommand):
    help = ("Export a project's submitted (gold) annotations, optionally de-identified: --conceal pseudo, class, "
            "mask or remove for every label, or project for the project's saved policy (a report.json goes beside).")

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path)
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt")
        parser.add_argument("--pool-only", action="store_true", help="leave out the evaluation documents")
        parser.add_argument("--conceal", choices=EXPORT_CONCEALMENTS, default="none",
                            help="conceal the PHI: one strategy for every label, or the project's policy")

    def handle(self, *args, out: Path, project: str, fmt: str, pool_only: bool, conceal: str, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"there is no project named {project!r}")
        try:
            result = export_deidentified(project=target, fmt=fmt, out=out, conceal=conceal,
                                         include_evaluation=not pool_only)
        except (FormatError, DeidError) as error:
            raise CommandError(str(error)) from None
        summary = result.summary
        line = f"exported {summary.documents} documents with {summary.spans} spans to {out}"
        if result.report_path is not None:
            line += f" (concealed: {conceal}; report in {result.report_path})"
        self.stdout.write(line)
