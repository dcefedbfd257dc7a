"""Settings, URLs, ASGI, the Celery application and the launcher.

The Celery application is made when the settings are read (``config.settings`` imports ``config.celery``), so
that every Django process sends tasks through it; the launcher, which reads no settings, does not import
Celery at all (``config.celery_app`` still names the application)."""


def __getattr__(name: str):
    if name == "celery_app":
        from config.celery import app

        return app
    raise AttributeError(f"module 'config' has no attribute {name!r}")
