from django.apps import AppConfig


class LearningConfig(AppConfig):
    name = "learning"
    verbose_name = "Learning"

    def ready(self) -> None:
        from learning import receivers  # noqa: F401 - connects the loop to submissions
