"""A request body sent without a ``Content-Length`` (``Transfer-Encoding: chunked``) is refused
with a 411 in the one error shape (issue 30, defect 6).

Django reads a WSGI body as ``Content-Length`` bytes (``WSGIRequest``'s ``LimitedStream``); without
that header it reads none, even where the server (gunicorn, runserver) de-chunks the body into
``wsgi.input``. Such a request reached the view as an empty body and answered "blocks: This field
is required". It is told instead what to send.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from timeline_app.api.exceptions import error_body

MESSAGE = "send the request body with a Content-Length header: a chunked body (Transfer-Encoding) is not read"


class ChunkedBodyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        encoding = request.META.get("HTTP_TRANSFER_ENCODING", "")
        if encoding and not request.META.get("CONTENT_LENGTH"):
            body = error_body("length_required", MESSAGE, {"transfer_encoding": encoding})
            return JsonResponse(body, status=411)
        return self.get_response(request)
