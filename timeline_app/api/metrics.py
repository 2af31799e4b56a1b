"""``/metrics``: the Prometheus text format (``timeline_app.metrics`` holds the metrics)."""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from timeline_app.api.exceptions import error_body
from timeline_app.metrics import registry


def _direct_loopback(request: HttpRequest) -> bool:
    """A client on this host talking to us directly: a loopback address and no proxy's forwarding
    header (a proxy on the same host connects from loopback too, on behalf of anyone)."""
    if "X-Forwarded-For" in request.headers or "Forwarded" in request.headers:
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format. With ``TIMELINE_METRICS_TOKEN`` set, only with ``Authorization:
    Bearer <that token>``; without it, open with DEBUG on (the embedded mode) and, with DEBUG off
    (production), only to clients on this host that connect directly (403 to anyone else)."""
    token = settings.TIMELINE_METRICS_TOKEN
    if not token and not settings.DEBUG and not _direct_loopback(request):
        return JsonResponse(
            error_body(
                "forbidden",
                "/metrics is served to this host only; set TIMELINE_METRICS_TOKEN to scrape it from elsewhere",
            ),
            status=403,
        )
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
