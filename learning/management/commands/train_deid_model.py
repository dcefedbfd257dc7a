from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from learning.services.deid_model import request_deid_model, run_deid_model


class Command(BaseCommand):
    help = ("Train a project's de-identification model (the CRF and BiLSTM-CRF ensemble) on its submitted gold, "
            "here rather than on a worker; the project de-identifies with it once its settings choose it.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)

    def handle(self, *args, project, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"there is no project named {project!r}")
        model, created = request_deid_model(project=target)
        if not created:
            raise CommandError(f"a de-identification model of {project!r} is already {model.status} "
                               f"(#{model.pk}); wait for it to end")
        model = run_deid_model(model.pk)
        if model.status != model.Status.DONE:
            raise CommandError(f"the de-identification model #{model.pk} failed: {model.error}")
        entity = model.metrics.get("entity")
        scores = (f"entity F1 {entity['f1']:.4f}, leakage {model.metrics['leakage']:.4f} on the evaluation documents"
                  if entity else "not evaluated: the project has no evaluation documents")
        chosen = (target.deid_tagger or {}).get("kind") == "ensemble"
        self.stdout.write(
            f"{target.name}: de-identification model #{model.pk} trained on {model.n_documents} records in "
            f"{model.train_seconds:.0f} s; {scores}"
            + ("" if chosen else "; choose it on the De-identification settings page to de-identify with it"))
