from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from timeline_app.api.exceptions import json_not_found
from timeline_app.api.health import healthz
from timeline_app.api.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("timeline_app.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    # Last: any other /api/ URL answers the JSON error shape, with DEBUG on (which bypasses
    # handler404) as with DEBUG off, and for every method: the API authenticates by key, never by
    # session cookie, so CSRF does not apply (else a POST here answered Django's HTML 403 page).
    re_path(r"^api/", csrf_exempt(json_not_found)),
]


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/") or request.path.startswith("/healthz"):
        return json_not_found(request, exception)
    return page_not_found(request, exception)


handler400 = "timeline_app.api.exceptions.json_bad_request"
handler500 = "timeline_app.api.exceptions.json_server_error"
