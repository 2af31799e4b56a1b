"""Settings, all from the environment (README "Configuration" lists every variable).

With nothing set, the service runs embedded: a SQLite file under ``var/``, Celery tasks run
eagerly in-process, and the extractive summarizer. Malformed values fail loudly at start.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

SECRET_KEY = env.str("SECRET_KEY", default="dev-insecure-secret-key-change-me")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "timeline_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers take the lock at BEGIN, so concurrent appends queue instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 30})
ATOMIC_REQUESTS = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Production: set STATIC_ROOT and run collectstatic; the embedded mode serves from the apps directly.
STATIC_ROOT = env.str("STATIC_ROOT", default="") or None
# WhiteNoise serves the admin's and the API docs' static files straight from the installed apps
# (no CDN, no collectstatic step for the embedded mode).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Request bodies up to this size are read; per-field limits below give the precise 4xx.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("TIMELINE_MAX_REQUEST_BYTES", default=64 * 1024 * 1024)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["timeline_app.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["timeline_app.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "timeline_app.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {"compact": env.str("TIMELINE_COMPACT_THROTTLE", default="30/min")},
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Timeline service API",
    "DESCRIPTION": "Conversation context for LLM agents: blocks, rendering with cache points, compaction.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # OpenAPI links from the creating operations to the ones on what they created.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "timeline_app.api.schema.add_links",
    ],
}

# Celery: eager in the embedded mode (no broker configured), a real broker otherwise.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=CELERY_BROKER_URL or "cache+memory://")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# Redelivery of a task whose worker died (acks_late): Redis hands an unacknowledged task to another
# worker after the visibility timeout, which must exceed the longest compaction (LLM retries
# included). Unacked tasks are looked for every restore interval.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_BROKER_VISIBILITY_TIMEOUT", default=3600),
    "unacked_restore_interval": env.int("CELERY_BROKER_RESTORE_INTERVAL", default=60),
    "unacked_restore_throttle": 1,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# With acks_late, a task running when the broker connection drops is redelivered: cancel it here.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# Background compaction (docs/background.md): the beat sweep enqueues a compaction for every
# timeline whose visible tokens passed TIMELINE_SOFT_THRESHOLD × its max_tokens, so renders rarely
# wait on a summary. Only conversations active within the sweep's lookback are looked at.
TIMELINE_SOFT_THRESHOLD = env.float("TIMELINE_SOFT_THRESHOLD", default=0.75)
if not 0.05 <= TIMELINE_SOFT_THRESHOLD <= 1.0:
    raise environ.ImproperlyConfigured("TIMELINE_SOFT_THRESHOLD must be between 0.05 and 1")
TIMELINE_SWEEP_INTERVAL_SECONDS = env.float("TIMELINE_SWEEP_INTERVAL_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "compaction-sweep": {
        "task": "compaction.tasks.sweep_compactions",
        "schedule": TIMELINE_SWEEP_INTERVAL_SECONDS,
        "kwargs": {"active_within_seconds": env.int("TIMELINE_SWEEP_ACTIVE_WITHIN_SECONDS", default=3600)},
        # A sweep still queued when the next one is due is dropped, not run late.
        "options": {"expires": TIMELINE_SWEEP_INTERVAL_SECONDS},
    },
}

# The summarizer: extractive (offline) unless an Anthropic key is configured.
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
TIMELINE_SUMMARIZER = env.str(
    "TIMELINE_SUMMARIZER", default="anthropic" if ANTHROPIC_API_KEY else "extractive"
)
if TIMELINE_SUMMARIZER not in {"extractive", "anthropic"}:
    raise environ.ImproperlyConfigured("TIMELINE_SUMMARIZER must be 'extractive' or 'anthropic'")
TIMELINE_SUMMARY_MODEL = env.str("TIMELINE_SUMMARY_MODEL", default="claude-sonnet-4-5")
# Anthropic retries (429, 529, other 5xx, timeouts): the SDK's exponential backoff with jitter.
TIMELINE_ANTHROPIC_MAX_RETRIES = env.int("TIMELINE_ANTHROPIC_MAX_RETRIES", default=4)
TIMELINE_ANTHROPIC_TIMEOUT_SECONDS = env.float("TIMELINE_ANTHROPIC_TIMEOUT_SECONDS", default=60.0)
# A custom summarizer: dotted path to a class (or factory) called with no arguments that returns
# an object with ``name``, ``model`` and ``summarize(...)``. Takes precedence over TIMELINE_SUMMARIZER.
TIMELINE_SUMMARIZER_CLASS = env.str("TIMELINE_SUMMARIZER_CLASS", default="")

# Custom compaction strategies for named contexts: name -> dotted path of a callable
# ``(messages, **params) -> kept indices`` (docs/contexts.md), e.g. "keep_first=myapp.strategies.keep_first".
TIMELINE_CUSTOM_STRATEGIES = env.dict("TIMELINE_CUSTOM_STRATEGIES", default={})

# Input limits (README "Limits").
TIMELINE_MAX_BLOCK_TEXT_CHARS = env.int("TIMELINE_MAX_BLOCK_TEXT_CHARS", default=1_000_000)
TIMELINE_MAX_ATTACHMENT_BYTES = env.int("TIMELINE_MAX_ATTACHMENT_BYTES", default=20 * 1024 * 1024)
TIMELINE_MAX_BLOCKS_PER_REQUEST = env.int("TIMELINE_MAX_BLOCKS_PER_REQUEST", default=500)
TIMELINE_MAX_JSON_DEPTH = env.int("TIMELINE_MAX_JSON_DEPTH", default=32)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # The SDK logs request options (the whole prompt) at DEBUG: never below INFO.
    "loggers": {"anthropic": {"level": "INFO"}, "httpx": {"level": "WARNING"}},
}
