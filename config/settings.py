"""Settings, all from the environment (DATABASE_URL, REDIS_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, ...).

Without DATABASE_URL / REDIS_URL the embedded services of ``./deidloop`` are assumed (the launcher exports
their URLs before anything reads these settings).
"""
from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url

from django.core.exceptions import ImproperlyConfigured

from config import sizing as _sizing
from corpus.private_files import write_once
from config._compat.plotly import plotly_js_folder

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("DEIDLOOP_DATA_DIR") or os.environ.get("DEIDLOOP_VAR") or BASE_DIR / "var")
# Where trained models (and the bases of the next retrain) are kept for every process to read: "local" (files
# under DATA_DIR, which every worker must then share) or "postgres" (the database, for workers on other hosts).
ARTIFACT_STORE = os.environ.get("DEIDLOOP_ARTIFACT_STORE", "local")
if ARTIFACT_STORE not in ("local", "postgres"):
    raise ImproperlyConfigured(f"DEIDLOOP_ARTIFACT_STORE must be local or postgres, not {ARTIFACT_STORE!r}")


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept under the data folder."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = DATA_DIR / "secret_key"
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        # 0600 from its creation, whole when it appears, and never over an existing file (it also signs the
        # saved models): processes started together on a new data folder all read the same key.
        write_once(path, secrets.token_urlsafe(50).encode())
    key = path.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty; remove it to have a new secret key generated.")
    return key


SECRET_KEY = _secret_key()
#: DEIDLOOP_ENV=production (docker-compose.yml sets it) turns on the settings for serving over HTTPS behind the
#: reverse proxy (secure cookies, HSTS, redirect to HTTPS); development serves plain HTTP on 127.0.0.1.
PRODUCTION = os.environ.get("DEIDLOOP_ENV", "development").strip().lower() == "production"
DEBUG = _env_bool("DEBUG", False) and not PRODUCTION
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "http://127.0.0.1:8000,http://localhost:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "channels",
    "annotator",
    "learning",
    "deid",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # A session is written again only once a minute (config/sessions.py).
    "config.sessions.SessionRenewalMiddleware",
    # The language: the one chosen in the navigation (set_language's cookie), else the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, authenticating with the user read together with the session (config/sessions.py).
    "config.sessions.AuthenticationMiddleware",
    "annotator.middleware.CurrentRequestMiddleware",
    "config.middleware.LoginRequiredExceptApiMiddleware",
    "config.middleware.PasswordChangeRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out login attempt into the lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# Each web thread (config.asgi: DEIDLOOP_WEB_THREADS per process, DEIDLOOP_WEB_WORKERS processes) and each
# worker process keeps one connection open between requests (checked before reuse), so that a request does
# not pay for a new one: the connections stay as many as the threads (config.sizing.database_connections,
# which the embedded PostgreSQL's max_connections allows for).
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "postgres://deidloop@127.0.0.1:5432/deidloop"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
# Two test runs in one checkout at once each need a test database of their own (the default is test_<name>).
if os.environ.get("DEIDLOOP_TEST_DATABASE"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["DEIDLOOP_TEST_DATABASE"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
CHANNEL_LAYERS = {
    "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}},
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fix-up closes every database connection before and after each task unless told to reuse
# them, and a new connection costs about 10 ms (PostgreSQL starts a process and fills its caches) where a query
# on a kept one takes 1 ms: about 25 times a retrain, most on its critical path. A worker process keeps its connection
# across tasks (closed every this many, and whenever Django's own rules close it: learning.tasks checks it
# before each task, as a request's is checked).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The worker's broker connection carries one channel, the task consumer's: no remote control (its mailbox),
# and no gossip or mingle (the worker's command line: config.launcher.worker_command, docker-compose.yml).
# With Celery 5.7.0 / kombu 5.7.0, losing Redis (a restart) with a task in flight killed a worker that had
# more: the teardown of the lost connection stops at the first channel whose close needs Redis, detaches
# the transport, and then closes the task consumer's channel again; restoring its unacknowledged message
# reads the detached transport (``AttributeError: 'NoneType' object has no attribute 'hostname'`` in
# kombu's ``_connparams``), an error Celery does not treat as a lost connection. With one channel the
# teardown closes it while the transport is attached, and the worker reconnects
# (tests/integration/test_broker_faults.py). Nothing here uses remote control (``celery inspect``).
CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
# A message a killed worker did not acknowledge goes back to the queue after this long; the loop does not
# wait for it (its jobs are resumed from the database), so it only bounds how long a lost message lingers.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("DEIDLOOP_VISIBILITY_TIMEOUT", "3600"))}
CELERY_RESULT_EXPIRES = 24 * 3600
# Several deployments (or a test run beside a running one) can share a Redis with different queues.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("DEIDLOOP_QUEUE", "celery")
# No beat schedule: every worker runs the loop's watchdog (learning.recover_jobs) once a minute in its
# heartbeat thread (learning.services.workers.Heartbeat), so that an idle worker receives no message and its
# pool can shrink (``--autoscale``) after DEIDLOOP_WORKER_IDLE_SECONDS without a task.
CELERY_WORKER_AUTOSCALER = "learning.services.workers:IdleAutoscaler"
WORKER_IDLE_SECONDS = _sizing.worker_idle_seconds()

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes checks every login (the login page, the admin's, the API's token endpoint) before the model
# backend does.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's, reading the user's account (must they change their password?) with the user.
    "config.authentication.AccountModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotator:project-list"
LOGOUT_REDIRECT_URL = "login"

# Failed logins: after DEIDLOOP_LOGIN_FAILURE_LIMIT failures in a row for one account, or from one address,
# further attempts for that account (or from that address) are refused for DEIDLOOP_LOGIN_LOCKOUT_MINUTES,
# even with the right password. `manage.py axes_reset_username NAME` / `axes_reset_ip ADDRESS` lift a lockout.
AXES_FAILURE_LIMIT = int(os.environ.get("DEIDLOOP_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("DEIDLOOP_LOGIN_LOCKOUT_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_LOCKOUT_CALLABLE = "config.authentication.lockout_response"
# The address is REMOTE_ADDR only: behind the reverse proxy the web server sets it from the proxy's forwarding
# header (config.webserver --proxy-headers), and a client cannot forge it.
AXES_IPWARE_META_PRECEDENCE_ORDER = ("REMOTE_ADDR",)
# Failed logins go to the audit log (annotator.signals); axes keeps only its counters.
AXES_DISABLE_ACCESS_LOG = True

# Sessions end after DEIDLOOP_SESSION_IDLE_MINUTES without a request (a request renews its session when the
# stored expiry is a minute old: config/sessions.py) and when the browser closes.
SESSION_ENGINE = "config.sessions"
SESSION_COOKIE_AGE = int(os.environ.get("DEIDLOOP_SESSION_IDLE_MINUTES", "30")) * 60
SESSION_SAVE_EVERY_REQUEST = False
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"

# English unless a user picks Spanish or their browser asks for it first (config/i18n.py compiles locale/).
LANGUAGE_CODE = "en-us"
LANGUAGES = [("en", "English"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Browser libraries come from the npm registry at set-up time (package.json), never from the repository.
if (BASE_DIR / "node_modules" / "htmx.org" / "dist").is_dir():
    STATICFILES_DIRS.append(("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"))
# plotly's JavaScript ships inside its Python wheel (installed from PyPI with the other requirements).
STATICFILES_DIRS.append(("vendor/plotly", plotly_js_folder()))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = DATA_DIR / "media"

# Uploads: corpora can be large; bigger than this is refused with a clear message by the import service.
# Every limit is summed over one request, whatever mix of files and zip archives it carries.
DEIDLOOP_MAX_UPLOAD_BYTES = int(os.environ.get("DEIDLOOP_MAX_UPLOAD_BYTES", str(200 * 1024 * 1024)))
# A request body larger than this is refused (413) by config.asgi before it is read: the files plus the
# multipart framing and the form's other fields.
DEIDLOOP_MAX_REQUEST_BYTES = int(
    os.environ.get("DEIDLOOP_MAX_REQUEST_BYTES", str(DEIDLOOP_MAX_UPLOAD_BYTES + 1024 * 1024))
)
# What the uploaded archives may unpack to, how many entries (members and files) and how much larger than
# packed (per member and overall, once past 1 MiB): zip bombs are refused before anything is unpacked.
DEIDLOOP_MAX_UNPACKED_BYTES = int(os.environ.get("DEIDLOOP_MAX_UNPACKED_BYTES", str(1024 * 1024 * 1024)))
DEIDLOOP_MAX_UPLOAD_ENTRIES = int(os.environ.get("DEIDLOOP_MAX_UPLOAD_ENTRIES", "20000"))
DEIDLOOP_MAX_COMPRESSION_RATIO = float(os.environ.get("DEIDLOOP_MAX_COMPRESSION_RATIO", "100"))
# Uploads unpacking to more than this are imported by a worker (with progress), not in the web request.
DEIDLOOP_SYNC_IMPORT_BYTES = int(os.environ.get("DEIDLOOP_SYNC_IMPORT_BYTES", str(4 * 1024 * 1024)))
# An export of more records than this is made by a worker, its progress shown; smaller ones in the request.
DEIDLOOP_SYNC_EXPORT_RECORDS = int(os.environ.get("DEIDLOOP_SYNC_EXPORT_RECORDS", "5000"))
# De-identification: the API refuses (400) a text larger than this; the page hands text or files larger than
# the second (or several files) to a worker, with progress and a download.
DEIDLOOP_DEIDENTIFY_MAX_TEXT_BYTES = int(os.environ.get("DEIDLOOP_DEIDENTIFY_MAX_TEXT_BYTES", str(1024 * 1024)))
DEIDLOOP_SYNC_DEIDENTIFY_BYTES = int(os.environ.get("DEIDLOOP_SYNC_DEIDENTIFY_BYTES", str(200 * 1024)))
# Who creates projects in the browser ("New project" on the project list): site administrators always; with
# DEIDLOOP_LEADS_CREATE_PROJECTS=1 also anyone who leads (or administers) a project.
DEIDLOOP_LEADS_CREATE_PROJECTS = _env_bool("DEIDLOOP_LEADS_CREATE_PROJECTS", False)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# The API takes a token (POST /api/auth/token/) or the browser's session. HTTP Basic authentication sends the
# password with every request and escapes the login lockout's answer, so it is off unless
# DEIDLOOP_API_BASIC_AUTH turns it on. A user who must change their password is refused (403) by each of them.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "config.authentication.SessionAuthentication",
        "config.authentication.TokenAuthentication",
        *(["config.authentication.BasicAuthentication"] if _env_bool("DEIDLOOP_API_BASIC_AUTH", False) else []),
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "annotator.api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    # "format" is a field of our import and export endpoints, not a renderer switch.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "deidloop API",
    "DESCRIPTION": "Projects, documents, annotations, import and export of de-identification corpora.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its documentation pages are for signed-in users only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and ReDoc are served from the drf-spectacular-sidecar package, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a "status"; each choice set gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "annotator.models.Document.Status",
        "ImportJobStatusEnum": "annotator.models.ImportJob.Status",
    },
}

# Content-Security-Policy, in every environment (the browser tests run under it): scripts only from our own
# static files, never inline (page data travels in json_script elements); no plugins, no framing. Inline
# styles are allowed: plotly writes its chart and mode-bar rules into <style> elements it creates per chart (no
# fixed hash covers them), and the workbench shades each suggestion with a style attribute. plotly also
# renders images to blob: URLs.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

if PRODUCTION:
    # Behind the TLS-terminating reverse proxy (deploy/Caddyfile), which says the scheme in X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DEIDLOOP_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("DEIDLOOP_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = _env_bool("DEIDLOOP_HSTS_PRELOAD", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# The Celery application, made with the settings so that every Django process sends its tasks through it
# (config/__init__.py says why it is not made on importing the package).
from config import celery as _celery  # noqa: E402,F401
