"""``/metrics``: the Prometheus text format (``timeline_app.metrics`` holds the metrics)."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from timeline_app.api.exceptions import error_body
from timeline_app.metrics import registry


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format; open unless ``TIMELINE_METRICS_TOKEN`` is set, then only with
    ``Authorization: Bearer <that token>``."""
    token = settings.TIMELINE_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = JsonResponse(
                error_body(
                    "unauthenticated", "/metrics needs Authorization: Bearer <TIMELINE_METRICS_TOKEN>"
                ),
                status=401,
            )
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
