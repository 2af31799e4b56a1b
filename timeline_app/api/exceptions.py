"""One error shape for every 4xx and 5xx: ``{"error": {"code", "message", "details"}}``.

A dependency outage (PostgreSQL, the Redis cache or the broker unreachable) answers 503 with
``Retry-After`` and a ``database_unavailable``/``cache_unavailable``/``broker_unavailable`` code,
from DRF's exception handler for the API and from :class:`DependencyOutageMiddleware` (and the 500
handler) for everything else. Only connection-level failures count: a deadlock, a lock or
statement timeout or a constraint is a bug to see as a 500.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import kombu.exceptions
import redis.exceptions
from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from timeline_app.domain.settings import SettingsError
from timeline_app.errors import DomainError

logger = logging.getLogger(__name__)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


RETRY_AFTER_SECONDS = 2
"""What a 503 asks clients to wait: a restarting PostgreSQL or Redis is back within seconds."""

# SQLSTATEs of a lost or refused connection: class 08 (connection exception), the server shutting
# down or starting up (57P01-57P03), no connection slot left (53300). A failed connection attempt
# or a connection dropped mid-query has no SQLSTATE at all.
_OUTAGE_SQLSTATES = ("08", "57P01", "57P02", "57P03", "53300")


def dependency_outage(exc: BaseException) -> str | None:
    """``"database"``, ``"cache"`` or ``"broker"`` when ``exc`` says that dependency cannot be
    reached; None for anything else (which stays a 500)."""
    if isinstance(exc, InterfaceError):  # "connection already closed"
        return "database"
    if isinstance(exc, OperationalError):
        cause = exc.__cause__
        if not hasattr(cause, "sqlstate"):  # not PostgreSQL (SQLite's "database is locked")
            return None
        sqlstate = getattr(cause, "sqlstate", None)
        return "database" if sqlstate is None or sqlstate.startswith(_OUTAGE_SQLSTATES) else None
    if isinstance(exc, kombu.exceptions.OperationalError):  # apply_async: the broker is unreachable
        return "broker"
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return "cache"
    return None


def outage_body(dependency: str) -> dict[str, Any]:
    return error_body(
        f"{dependency}_unavailable",
        f"the {dependency} is unreachable; retry after {RETRY_AFTER_SECONDS} s",
        {"dependency": dependency, "retry_after": RETRY_AFTER_SECONDS},
    )


def outage_response(dependency: str, request: HttpRequest) -> JsonResponse:
    logger.warning("%s unreachable: %s %s answered 503", dependency, request.method, request.path)
    response = JsonResponse(outage_body(dependency), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DependencyOutageMiddleware:
    """A view outside DRF (the admin, the docs) that fails on an unreachable dependency answers
    503 with ``Retry-After`` instead of a 500. (``/healthz`` reports outages itself.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        dependency = dependency_outage(exception)
        return outage_response(dependency, request) if dependency else None


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
    dependency = dependency_outage(exc)
    if dependency:
        request = context.get("request")
        logger.warning(
            "%s unreachable: %s %s answered 503",
            dependency,
            getattr(request, "method", ""),
            getattr(request, "path", ""),
        )
        return Response(
            outage_body(dependency), status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
        )
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
    """The 500 handler, also reached by an exception raised in a middleware: an outage there
    (the session store, a database-backed cache) is a 503 too."""
    dependency = dependency_outage(sys.exc_info()[1] or Exception())
    if dependency:
        return outage_response(dependency, request)
    return JsonResponse(error_body("server_error", "internal error"), status=500)
