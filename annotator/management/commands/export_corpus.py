from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from corpus.formats.errors import FormatError
from annotator.models import Project
from annotator.services.exports import EXPORT_FORMATS, export_corpus


class Command(BaseCommand):
    help = "Export a project's submitted (gold) annotations."

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path)
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt")
        parser.add_argument("--pool-only", action="store_true", help="leave out the evaluation documents")

    def handle(self, *args, out: Path, project: str, fmt: str, pool_only: bool, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"there is no project named {project!r}")
        try:
            summary = export_corpus(project=target, fmt=fmt, out=out, include_evaluation=not pool_only)
        except FormatError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"exported {summary.documents} documents with {summary.spans} spans to {out}")
