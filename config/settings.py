"""Settings, all from the environment (README "Configuration" lists every variable).

With nothing set, the service runs embedded (the development mode): DEBUG on, a SQLite file and a
generated secret key under ``var/``, Celery tasks eagerly in-process, the extractive summarizer.
Production (``make serve``, ``deploy/``) sets ``DATABASE_URL``, ``CELERY_BROKER_URL`` and
``SECRET_KEY``. Malformed values fail loudly at start.
"""

import importlib.util
import re
from datetime import timedelta
from pathlib import Path

import django_stubs_ext
import environ

from config.secrets import development_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

# Generic classes of Django's (``admin.ModelAdmin[Conversation]``, ``QuerySet[...]``) made
# subscriptable at runtime, as django-stubs types them.
django_stubs_ext.monkeypatch()

env = environ.Env()

# The embedded mode (no DATABASE_URL: a SQLite file under var/) is the development path: DEBUG is on
# unless said otherwise, and a random secret key is kept in var/secret_key. Anywhere else DEBUG is
# off and SECRET_KEY must be set: there is no public default.
EMBEDDED = not env.str("DATABASE_URL", default="")
DEBUG = env.bool("DEBUG", default=EMBEDDED)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise environ.ImproperlyConfigured(
            "SECRET_KEY is not set. With DEBUG off the service needs its own secret key: "
            "export SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))') "
            '(README "Production"); for local development set DEBUG=true instead.'
        )
    SECRET_KEY = development_secret_key(BASE_DIR / "var" / "secret_key")
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
    "axes",
    "timeline_app",
]
# The benchmarks and the dev commands (`manage.py bench`, `setup_demo`: docs/operations.md
# "Benchmarks") are a Django app beside the server, `timeline_bench`: in the checkout, so
# `make run`, `make test` and `manage.py bench` have it (`make serve` too, where it only adds those
# two commands: no model, URL, middleware or task), and not in the server wheel, whose processes
# run the same without it (tests/config/test_bench_app.py). Nothing the server runs imports it.
if importlib.util.find_spec("timeline_bench") is not None:
    INSTALLED_APPS.append("timeline_bench")

MIDDLEWARE = [
    # First, so the logged duration is the whole request's (one JSON line per API request).
    "timeline_app.request_log.RequestLogMiddleware",
    # An unreachable PostgreSQL, Redis or broker answers 503 with Retry-After, not 500.
    "timeline_app.api.exceptions.DependencyOutageMiddleware",
    # A body without Content-Length (chunked) is a 411: Django would read it as empty.
    "timeline_app.api.bodies.ChunkedBodyMiddleware",
    # /healthz and /metrics for an orchestrator's probes on any Host (pod IP, 127.0.0.1), before
    # the host check and the HTTPS redirect (timeline_app/api/probes.py).
    "timeline_app.api.probes.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Row-level security: clears the tenant as a request starts (the API key sets it; staff on
    # the admin see every tenant). After authentication, before anything reads a tenant's rows.
    "timeline_app.tenancy.TenantScopeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a locked-out admin login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# Admin login lockout (django-axes, docs/admin.md "Login lockout"): AXES_FAILURE_LIMIT wrong
# passwords for one username from one client address lock that pair out for AXES_COOLOFF_MINUTES
# (429, even with the right password); a successful login resets the count. Failures are stored
# in the database (axes' tables). API keys never pass through Django's authenticate(): the API is
# not affected.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_MINUTES = env.int("AXES_COOLOFF_MINUTES", default=15)
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_MINUTES < 1:
    raise environ.ImproperlyConfigured("AXES_FAILURE_LIMIT and AXES_COOLOFF_MINUTES must be at least 1")
AXES_COOLOFF_TIME = timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "config.login_lockout.client_ip"

ROOT_URLCONF = "config.urls"

# Behind a TLS-terminating proxy (the production layout, README "Production"): trust its
# X-Forwarded-Proto, redirect plain HTTP to HTTPS, send HSTS and keep cookies on HTTPS only.
# Health and metrics probes come over plain HTTP from inside the network: never redirected.
TIMELINE_BEHIND_TLS_PROXY = env.bool("TIMELINE_BEHIND_TLS_PROXY", default=False)
if TIMELINE_BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=TIMELINE_BEHIND_TLS_PROXY)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if TIMELINE_BEHIND_TLS_PROXY else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=TIMELINE_BEHIND_TLS_PROXY)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=TIMELINE_BEHIND_TLS_PROXY)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=TIMELINE_BEHIND_TLS_PROXY)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=TIMELINE_BEHIND_TLS_PROXY)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Error pages (DEBUG's included) and error reports never show credentials: the database and broker
# passwords, keys and tokens are masked wherever they appear (settings, request META, frame locals).
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.secrets.RedactingExceptionReporterFilter"
DEFAULT_EXCEPTION_REPORTER = "config.secrets.RedactingExceptionReporter"

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

if EMBEDDED:
    (BASE_DIR / "var").mkdir(exist_ok=True)
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers take the lock at BEGIN, so concurrent appends queue instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 30})
# PostgreSQL: keep a connection per web thread for a minute instead of one per request.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0 if EMBEDDED else 60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
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

TIMELINE_COMPACT_THROTTLE = env.str("TIMELINE_COMPACT_THROTTLE", default="30/min")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["timeline_app.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["timeline_app.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["timeline_app.api.renderers.StableJSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "timeline_app.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {"compact": TIMELINE_COMPACT_THROTTLE},
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
    # A compaction row's status (with queued, running) beside a compaction run's outcome (with busy).
    "ENUM_NAME_OVERRIDES": {
        "CompactionStatusEnum": "timeline_app.models.CompactionStatus",
        "OperationKindEnum": "timeline_app.domain.operations.KINDS",
    },
    # OpenAPI links from the creating operations to the ones on what they created.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "timeline_app.api.schema.add_links",
    ],
}

# The shared cache (the compact throttle's counters): every process must see the same counts.
# CACHE_URL (redis://…) or a Redis CELERY_BROKER_URL: Redis. Otherwise the database cache, whose
# table the migration 0005_cache_table creates (no createcachetable step to forget).
CACHE_TABLE = "timeline_cache"
_cache_url = env.str("CACHE_URL", default="") or (
    env.str("CELERY_BROKER_URL", default="")
    if env.str("CELERY_BROKER_URL", default="").startswith("redis")
    else ""
)


def cache_config(url: str) -> dict[str, object]:
    """``CACHES["default"]`` for a cache URL: Redis for ``redis://``/``rediss://``, else the database."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "timeline",
        }
    if url:
        raise environ.ImproperlyConfigured(
            "CACHE_URL must be a redis:// URL (or empty for the database cache)"
        )
    return {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}


CACHES = {"default": cache_config(_cache_url)}

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
# A Redis broker through kombu's Redis transport with its use-after-close fixed: a Redis restart
# must not stop the worker (config/broker.py).
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
# With acks_late, a task running when the broker connection drops is redelivered: cancel it here.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# Background compaction (docs/background.md): the beat sweep enqueues a compaction for every
# timeline whose visible tokens passed TIMELINE_SOFT_THRESHOLD × its max_tokens, so renders rarely
# wait on a summary. Only conversations active within the sweep's lookback are looked at.
TIMELINE_SOFT_THRESHOLD = env.float("TIMELINE_SOFT_THRESHOLD", default=0.75)
if not 0.05 <= TIMELINE_SOFT_THRESHOLD <= 1.0:
    raise environ.ImproperlyConfigured("TIMELINE_SOFT_THRESHOLD must be between 0.05 and 1")
TIMELINE_SWEEP_INTERVAL_SECONDS = env.float("TIMELINE_SWEEP_INTERVAL_SECONDS", default=60.0)
# A render past the soft threshold queues its timeline's compaction itself: at most this many per
# tenant (all its API keys together) per period, the compact endpoint's rate by default.
TIMELINE_NUDGE_THROTTLE = env.str("TIMELINE_NUDGE_THROTTLE", default=TIMELINE_COMPACT_THROTTLE)
if not re.fullmatch(r"[0-9]+/[smhd][a-z]*", TIMELINE_NUDGE_THROTTLE):
    raise environ.ImproperlyConfigured("TIMELINE_NUDGE_THROTTLE must look like 30/min (count/s|m|h|d)")
CELERY_BEAT_SCHEDULE = {
    "compaction-sweep": {
        "task": "compaction.tasks.sweep_compactions",
        "schedule": TIMELINE_SWEEP_INTERVAL_SECONDS,
        "kwargs": {"active_within_seconds": env.int("TIMELINE_SWEEP_ACTIVE_WITHIN_SECONDS", default=3600)},
        # A sweep still queued when the next one is due is dropped, not run late.
        "options": {"expires": TIMELINE_SWEEP_INTERVAL_SECONDS},
    },
    "render-history-trim": {"task": "timeline_app.tasks.trim_render_history", "schedule": 3600.0},
    "retention": {"task": "timeline_app.tasks.expire_idle_conversations", "schedule": 600.0},
}
# Retention: conversations idle longer than this many days are erased by the beat job, at most
# TIMELINE_RETENTION_BATCH per run (every 10 minutes). 0 (the default) keeps everything.
TIMELINE_RETENTION_IDLE_DAYS = env.float("TIMELINE_RETENTION_IDLE_DAYS", default=0.0)
TIMELINE_RETENTION_BATCH = env.int("TIMELINE_RETENTION_BATCH", default=100)
# The render history (the cache explainer's memory): per timeline, the newest N renders, none older
# than D days; the hourly beat job trims.
TIMELINE_RENDER_HISTORY_MAX = env.int("TIMELINE_RENDER_HISTORY_MAX", default=200)
TIMELINE_RENDER_HISTORY_DAYS = env.float("TIMELINE_RENDER_HISTORY_DAYS", default=7.0)
if TIMELINE_RENDER_HISTORY_MAX < 1 or TIMELINE_RENDER_HISTORY_DAYS <= 0:
    raise environ.ImproperlyConfigured("TIMELINE_RENDER_HISTORY_MAX must be >= 1 and _DAYS > 0")
# The operations log (issue 35): per context, the newest N entries; each entry trims its context.
TIMELINE_OPERATIONS_LOG_MAX = env.int("TIMELINE_OPERATIONS_LOG_MAX", default=1000)
if TIMELINE_OPERATIONS_LOG_MAX < 1:
    raise environ.ImproperlyConfigured("TIMELINE_OPERATIONS_LOG_MAX must be >= 1")

# Cost (issue 23): the price table's overrides, per model {provider?, input, output, cache_write_5m?,
# cache_write_1h?, cache_read?} in dollars per million tokens (defaults: rendering/usage/pricing.py);
# Anthropic's minimum cacheable length per model on top of the documented ones; the model a render's
# usage forecast assumes when the render names none; OpenAI's prompt retention for the forecast.
TIMELINE_PRICES = env.json("TIMELINE_PRICES", default={})
TIMELINE_CACHE_MIN_TOKENS = env.json("TIMELINE_CACHE_MIN_TOKENS", default={})
TIMELINE_FORECAST_MODEL = env.str("TIMELINE_FORECAST_MODEL", default="")
TIMELINE_OPENAI_CACHE_RETENTION_SECONDS = env.int("TIMELINE_OPENAI_CACHE_RETENTION_SECONDS", default=300)


def _check_cost_settings() -> None:
    from timeline_app.rendering.usage.pricing import price_table

    try:
        price_table(TIMELINE_PRICES if isinstance(TIMELINE_PRICES, dict) else {"": TIMELINE_PRICES})
    except ValueError as exc:
        raise environ.ImproperlyConfigured(f"TIMELINE_PRICES: {exc}") from exc
    if not isinstance(TIMELINE_CACHE_MIN_TOKENS, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in TIMELINE_CACHE_MIN_TOKENS.values()
    ):
        raise environ.ImproperlyConfigured("TIMELINE_CACHE_MIN_TOKENS must map model names to integers >= 0")
    if TIMELINE_OPENAI_CACHE_RETENTION_SECONDS < 0:
        raise environ.ImproperlyConfigured("TIMELINE_OPENAI_CACHE_RETENTION_SECONDS must be >= 0")


_check_cost_settings()

# The summarizer: extractive (offline) unless an Anthropic key is configured.
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
TIMELINE_SUMMARIZER = env.str(
    "TIMELINE_SUMMARIZER", default="anthropic" if ANTHROPIC_API_KEY else "extractive"
)
if TIMELINE_SUMMARIZER not in {"extractive", "anthropic", "openai"}:
    raise environ.ImproperlyConfigured("TIMELINE_SUMMARIZER must be 'extractive', 'anthropic' or 'openai'")
TIMELINE_SUMMARY_MODEL = env.str(
    "TIMELINE_SUMMARY_MODEL",
    default="gpt-4.1-mini" if TIMELINE_SUMMARIZER == "openai" else "claude-sonnet-5-5",
)
# The OpenAI-compatible summarizer (TIMELINE_SUMMARIZER=openai): OpenAI, Azure, OpenRouter, vLLM,
# Ollama… at TIMELINE_OPENAI_BASE_URL (empty: the SDK's default, api.openai.com or OPENAI_BASE_URL).
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
TIMELINE_OPENAI_BASE_URL = env.str("TIMELINE_OPENAI_BASE_URL", default="")
TIMELINE_OPENAI_MAX_RETRIES = env.int("TIMELINE_OPENAI_MAX_RETRIES", default=4)
TIMELINE_OPENAI_TIMEOUT_SECONDS = env.float("TIMELINE_OPENAI_TIMEOUT_SECONDS", default=60.0)
# How the summary's length limit is sent: OpenAI's current name, or the older one many
# compatible servers still expect.
TIMELINE_OPENAI_TOKEN_LIMIT_PARAM = env.str(
    "TIMELINE_OPENAI_TOKEN_LIMIT_PARAM", default="max_completion_tokens"
)
if TIMELINE_OPENAI_TOKEN_LIMIT_PARAM not in {"max_completion_tokens", "max_tokens"}:
    raise environ.ImproperlyConfigured(
        "TIMELINE_OPENAI_TOKEN_LIMIT_PARAM must be 'max_completion_tokens' or 'max_tokens'"
    )
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
TIMELINE_MAX_IMPORT_BLOCKS = env.int("TIMELINE_MAX_IMPORT_BLOCKS", default=50_000)
TIMELINE_MAX_CONTEXTS_PER_CONVERSATION = env.int("TIMELINE_MAX_CONTEXTS_PER_CONVERSATION", default=200)
TIMELINE_MAX_SEARCH_RESULTS = env.int("TIMELINE_MAX_SEARCH_RESULTS", default=50)
TIMELINE_MAX_JSON_DEPTH = env.int("TIMELINE_MAX_JSON_DEPTH", default=32)
# A block's or source's `meta`: bytes of its canonical JSON (a stored OpenAI message not counted),
# object keys at every level, nesting levels (domain.meta).
TIMELINE_MAX_META_BYTES = env.int("TIMELINE_MAX_META_BYTES", default=64 * 1024)
TIMELINE_MAX_META_KEYS = env.int("TIMELINE_MAX_META_KEYS", default=1_000)
TIMELINE_MAX_META_DEPTH = env.int("TIMELINE_MAX_META_DEPTH", default=10)

# /metrics (Prometheus text): only with "Authorization: Bearer <token>" when set; when empty, open
# with DEBUG on, else served to direct loopback clients only (403 to any other).
TIMELINE_METRICS_TOKEN = env.str("TIMELINE_METRICS_TOKEN", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # The SDK logs request options (the whole prompt) at DEBUG: never below INFO.
    "loggers": {"anthropic": {"level": "INFO"}, "httpx": {"level": "WARNING"}},
}
