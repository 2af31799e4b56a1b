"""One error shape for every 4xx: ``{"error": {"code", "message", "details"}}``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from timeline_app.errors import DomainError
from timeline_app.rendering.settings import SettingsError


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


_CODES: dict[type[Exception], str] = {
    drf.ParseError: "malformed_json",
    drf.AuthenticationFailed: "unauthenticated",
    drf.NotAuthenticated: "unauthenticated",
    drf.PermissionDenied: "forbidden",
    drf.NotFound: "not_found",
    drf.MethodNotAllowed: "method_not_allowed",
    drf.NotAcceptable: "not_acceptable",
    drf.UnsupportedMediaType: "unsupported_media_type",
    drf.Throttled: "throttled",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status)
    if isinstance(exc, SettingsError):
        return Response(error_body("invalid_settings", "invalid settings", exc.details), status=400)
    if isinstance(exc, RequestDataTooBig):
        return Response(error_body("too_large", "request body too large"), status=413)
    if isinstance(exc, Http404 | ObjectDoesNotExist):
        # A row that vanished under the request (its conversation erased meanwhile) is a 404.
        exc = drf.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, drf.ValidationError):
        response.data = error_body("invalid", "the request is not valid", exc.detail)
    elif isinstance(exc, drf.APIException):
        code = _CODES.get(type(exc), exc.default_code)
        response.data = error_body(code, str(exc.detail))
    return response


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("not_found", "no such resource"), status=404)


def json_bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("bad_request", str(exception) if exception else "bad request"), status=400)


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "internal error"), status=500)
