"""One structured log line and the request metrics for every API request.

The line (logger ``timeline.request``, JSON) holds the method, the route template (never the raw
path: it may carry a search query), the status, the duration and the conversation's public id and
context name — never a body, a block's text, a header or a key.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import ResolverMatch

from timeline_app import metrics

logger = logging.getLogger("timeline.request")

_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


def route_template(match: ResolverMatch | None) -> str:
    """``/api/v1/conversations/{conv}/render/`` for both ``path()`` and ``re_path()`` routes."""
    if match is None or not match.route:
        return "<unmatched>"
    route, out, i = match.route, [], 0
    while i < len(route):
        if route.startswith("(?P<", i):
            name_end = route.index(">", i)
            out.append("{" + route[i + 4 : name_end] + "}")
            i, depth, in_class = name_end + 1, 1, False
            while i < len(route) and depth:  # skip the group's pattern, brackets and escapes too
                char = route[i]
                if char == "\\":
                    i += 1
                elif in_class:
                    in_class = char != "]"
                elif char == "[":
                    in_class = True
                elif char in "()":
                    depth += 1 if char == "(" else -1
                i += 1
        else:
            if route[i] not in "^$":
                out.append(route[i])
            i += 1
    return "/" + _CONVERTER.sub(r"{\1}", "".join(out))


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        if request.path.startswith("/api/"):
            seconds = time.perf_counter() - started
            match = request.resolver_match
            route = route_template(match)
            metrics.observe_request(
                method=request.method or "", route=route, status=response.status_code, seconds=seconds
            )
            kwargs = match.kwargs if match else {}
            logger.info(
                json.dumps(
                    {
                        "event": "api_request",
                        "method": request.method,
                        "route": route,
                        "status": response.status_code,
                        "duration_ms": round(seconds * 1000, 1),
                        "conversation": kwargs.get("conv"),
                        "context": kwargs.get("context", "main" if "conv" in kwargs else None),
                    },
                    sort_keys=True,
                )
            )
        return response
