from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from corpus.formats.errors import FormatError
from annotator.models import Project
from annotator.schemas import PRESETS, UnknownSchemaError
from annotator.services.imports import FORMATS, ImportRejected, import_path, labels_in, read_path
from annotator.services.projects import ProjectError, create_project


class Command(BaseCommand):
    help = "Import a corpus into a project (created when missing); all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", required=True, choices=FORMATS, dest="fmt")
        parser.add_argument("--schema", help=f"label preset for a new project: {', '.join(PRESETS)} or custom")
        parser.add_argument("--evaluation", action="store_true", help="import as the held-out evaluation set")
        parser.add_argument(
            "--unannotated", action="store_true",
            help="the files are texts to annotate, not gold: they go to the pool unannotated (a brat .txt may "
                 "lack its .ann; spans in the files are not imported)",
        )
        parser.add_argument("--language", default="es")

    def handle(self, *args, path: Path, project: str, fmt: str, schema, evaluation: bool, unannotated: bool,
               language: str, **options):
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        annotated = False if unannotated else None
        created = None
        try:
            # One transaction: a project created for an import that then fails is not left behind.
            with transaction.atomic():
                target = Project.objects.filter(name=project).first()
                if target is None:
                    labels = None if schema else labels_in(read_path(path=path, fmt=fmt, annotated=annotated)[0])
                    target = created = create_project(
                        name=project, schema=schema or "custom", labels=labels, language=language,
                    )
                report = import_path(project=target, path=path, fmt=fmt, evaluation=evaluation, annotated=annotated)
        except (FormatError, ImportRejected, ProjectError, UnknownSchemaError) as error:
            raise CommandError(str(error)) from None
        if created is not None:
            self.stdout.write(f"created project {created.name!r} with {len(created.labels)} labels")
        self.stdout.write(
            f"imported {report.created} documents ({report.annotated} annotated, {report.spans} spans); "
            f"{report.duplicates} already there"
        )
