from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from learning.models import ModelVersion
from learning.services.retrain import train_and_rank


class Command(BaseCommand):
    help = "Train a project's tagger on its submitted gold, evaluate it and rank its pool."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--project")
        target.add_argument("--all", action="store_true")
        parser.add_argument("--if-no-model", action="store_true", help="skip projects that have a model already")

    def handle(self, *args, project, all, if_no_model, **options):
        projects = Project.objects.all() if all else Project.objects.filter(name=project)
        if not all and not projects.exists():
            raise CommandError(f"there is no project named {project!r}")
        for target in projects:
            if if_no_model and ModelVersion.objects.filter(project=target, is_current=True).exists():
                continue
            version = train_and_rank(project=target)
            if version is None:
                self.stdout.write(f"{target.name}: no submitted gold yet, nothing to train on")
                continue
            f1 = version.metrics.get("entity", {}).get("f1")
            self.stdout.write(
                f"{target.name}: model {version.pk} trained on {version.n_documents} documents in "
                f"{version.train_seconds:.1f} s" + (f", entity F1 {f1:.3f}" if f1 is not None else "")
            )
