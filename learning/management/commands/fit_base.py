from django.core.management.base import BaseCommand

from learning.services.cold_refit import fit_base


class Command(BaseCommand):
    help = ("Fit a project's tagger from zero on its gold and keep it as the base its next retrain continues from "
            "(a worker starts this at a low priority when the refit policy asks for a cold fit).")

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="the project's id")

    def handle(self, *args, project, **options):
        artifact = fit_base(project)
        self.stdout.write(f"project {project}: " + (f"base {artifact}" if artifact else "nothing to do"))
