"""JSON parsing that turns every malformed body into a clean 400."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from timeline_app.domain.message_validation import storable_problems
from timeline_app.errors import InvalidInput


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


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
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
