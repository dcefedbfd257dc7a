"""The Celery application; tasks are discovered in the Django apps."""
import os

from celery import Celery, signals

from config import sizing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("deidloop")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
def _yield_to_the_web(**kwargs) -> None:
    """The worker's main process lowers its CPU priority before it starts its pool, whose processes (those the
    autoscaler adds later too) inherit it (``config.sizing.worker_nice``)."""
    increment = sizing.worker_nice()
    if increment:
        os.nice(increment)
