"""``/healthz``: liveness and readiness (the database, and the broker when one is configured)."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse

from config.celery import app as celery_app
from timeline_app.api.exceptions import error_body


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return f"error: {type(exc).__name__}"
    return "ok"


def _broker() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager (no broker)"
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return f"error: {type(exc).__name__}"
    return "ok"


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database(), "broker": _broker()}
    if any(value.startswith("error") for value in checks.values()):
        return JsonResponse(error_body("unavailable", "a dependency is down", checks), status=503)
    return JsonResponse({"status": "ok", "checks": checks})
