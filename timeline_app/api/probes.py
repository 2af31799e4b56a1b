"""``/healthz`` and ``/metrics`` for an orchestrator's local probes, whatever ``Host`` they send.

A kubelet probes ``http://<pod IP>:8000/healthz`` and a sidecar scrapes
``http://127.0.0.1:8000/metrics``: plain HTTP, the pod's address as ``Host``, no
``X-Forwarded-Proto``. Under the production settings ``ALLOWED_HOSTS`` names the public host only,
so ``CommonMiddleware``'s host check answered those probes 400. This middleware sits before it
(and before ``SecurityMiddleware``, whose HTTPS redirect already exempts the two paths) and answers
the two paths itself for any host. Nothing else changes: ``/metrics`` keeps its own access rule
(the bearer token, or this host only with DEBUG off: ``api/metrics.py``), neither view reads the
host, and every other path still goes through the host check.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from timeline_app.api.health import healthz
from timeline_app.api.metrics import metrics_view

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/metrics": metrics_view}


class ProbeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = PROBES.get(request.path_info)
        if view is None:
            return self.get_response(request)
        response = view(request)
        # What SecurityMiddleware would have added; the probes skip it.
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response
