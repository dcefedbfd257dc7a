from django.apps import AppConfig


class DeidConfig(AppConfig):
    name = "deid"
    verbose_name = "De-identification"
