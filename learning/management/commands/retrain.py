from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from learning.models import ModelVersion
from learning.services.retrain import train_and_rank
from learning.tasks import request_first_model


class Command(BaseCommand):
    help = "Train a project's tagger on its submitted gold, evaluate it and rank its pool."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--project")
        target.add_argument("--all", action="store_true")
        parser.add_argument("--if-no-model", action="store_true", help="skip projects that have a model already")
        parser.add_argument(
            "--queue", action="store_true",
            help="queue the first retrain of projects with gold and no model for the workers, instead of training "
                 "here (with --if-no-model; ./deidloop up runs this)",
        )

    def handle(self, *args, project, all, if_no_model, queue, **options):
        if queue and not if_no_model:
            raise CommandError("--queue queues first models only: use it with --if-no-model")
        projects = Project.objects.all() if all else Project.objects.filter(name=project)
        if not all and not projects.exists():
            raise CommandError(f"there is no project named {project!r}")
        for target in projects:
            if if_no_model and ModelVersion.objects.filter(project=target, is_current=True).exists():
                continue
            if queue:
                job = request_first_model(project=target)
                if job is not None:
                    self.stdout.write(f"{target.name}: first model queued (retrain #{job.pk}); the workers train it")
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
