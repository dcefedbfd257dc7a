from django.apps import AppConfig


class DeidConfig(AppConfig):
    name = "deid"
    verbose_name = "De-identification"

    def ready(self) -> None:
        from deid import receivers  # noqa: F401 - hides eponyms from the annotators' suggestions
