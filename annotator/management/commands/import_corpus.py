from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from corpus.formats.errors import FormatError
from annotator.models import Project
from annotator.schemas import PRESETS, UnknownSchemaError
from annotator.services.imports import FORMATS, ImportRejected, import_path
from annotator.services.projects import ProjectError, create_project
from corpus.formats import read_corpus
from annotator.services.imports import labels_in


class Command(BaseCommand):
    help = "Import a corpus into a project (created when missing); all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", required=True, choices=FORMATS, dest="fmt")
        parser.add_argument("--schema", help=f"label preset for a new project: {', '.join(PRESETS)} or custom")
        parser.add_argument("--evaluation", action="store_true", help="import as the held-out evaluation set")
        parser.add_argument("--language", default="es")

    def handle(self, *args, path: Path, project: str, fmt: str, schema, evaluation: bool, language: str, **options):
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        try:
            target = Project.objects.filter(name=project).first()
            if target is None:
                labels = None if schema else labels_in(read_corpus(path, fmt))
                target = create_project(name=project, schema=schema or "custom", labels=labels, language=language)
                self.stdout.write(f"created project {target.name!r} with {len(target.labels)} labels")
            report = import_path(project=target, path=path, fmt=fmt, evaluation=evaluation)
        except (FormatError, ImportRejected, ProjectError, UnknownSchemaError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"imported {report.created} documents ({report.annotated} annotated, {report.spans} spans); "
            f"{report.duplicates} already there"
        )
