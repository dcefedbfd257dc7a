from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotator import signals  # noqa: F401  (connects the login audit)
        from annotator import receivers  # noqa: F401  (connects the membership audit)
