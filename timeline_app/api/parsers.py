"""JSON parsing that turns every malformed body into a clean 400."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from timeline_app.domain.json_shape import ShapeLimits, json_shape_problem
from timeline_app.domain.message_validation import storable_problems
from timeline_app.errors import InvalidInput, TooLarge


def json_depth(value: Any, limit: int) -> int:
    """Depth of nested arrays/objects, stopping early past ``limit`` (iterative: no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


SCAN_FROM_BYTES = 64 * 1024
"""Bodies at least this big have their structure read before they are parsed (``json_shape``);
a smaller one costs a few megabytes at most to parse whole."""
KEYS_MARGIN = 64
"""Keys a block, message or source holds beside its ``meta`` (its own fields), over the meta cap."""


def body_limit(view: Any) -> int:
    """The most bytes ``view`` reads of a body: its own ``max_body_bytes`` (what it accepts), at
    most ``TIMELINE_MAX_REQUEST_BYTES`` (``DATA_UPLOAD_MAX_MEMORY_SIZE``)."""
    limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    own = getattr(view, "max_body_bytes", None)
    return limit if own is None else min(int(own), limit)


def shape_limits() -> ShapeLimits:
    """Caps no accepted body passes: depth, the meta key cap (plus a block's own fields) for any
    object, the largest list an endpoint takes (an import's blocks, a compaction's turn ids)."""
    return ShapeLimits(
        max_depth=settings.TIMELINE_MAX_JSON_DEPTH,
        max_keys=settings.TIMELINE_MAX_META_KEYS + KEYS_MARGIN,
        max_items=max(100_000, settings.TIMELINE_MAX_IMPORT_BLOCKS),
    )


def _declared_length(parser_context: Any) -> int:
    request = (parser_context or {}).get("request")
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
    except ValueError:
        return 0


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        # Refused early: a body over what this endpoint accepts is never read (Content-Length), or
        # read no further than one byte past its limit; a big one has its structure checked before
        # anything is built from it.
        limit = body_limit((parser_context or {}).get("view"))
        if _declared_length(parser_context) > limit:
            raise TooLarge(
                f"the request body is over this endpoint's limit of {limit} bytes",
                details={"limit_bytes": limit},
            )
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise TooLarge(
                f"the request body is over this endpoint's limit of {limit} bytes",
                details={"limit_bytes": limit},
            )
        if len(raw) >= SCAN_FROM_BYTES and (problem := json_shape_problem(raw, shape_limits())):
            raise InvalidInput(f"the body is refused before it is read: {problem}", details={"body": problem})
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except RecursionError as exc:
            raise ParseError("JSON nested too deeply") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"malformed JSON: {exc}") from exc
        limit = settings.TIMELINE_MAX_JSON_DEPTH
        if json_depth(data, limit) > limit:
            raise ParseError(f"JSON nested deeper than {limit} levels")
        # PostgreSQL stores neither NUL nor a lone surrogate (text or jsonb, keys or values): one
        # check here covers every JSON field of every endpoint, before any validation or write.
        problems = storable_problems(data)
        if problems:
            raise InvalidInput("the body holds characters that cannot be stored", details=problems)
        return data
