"""Shared OpenAPI declarations: one error shape, the path parameters, one operation decorator.

Every view declares its operation with :func:`operation`, which adds the error responses it names
(each with the ``{"error": {code, message, details}}`` body) to the success response. ``ApiSchema``
keeps a declared path parameter only on the paths that have it (one view serves both
``…/{conv}/render/`` and ``…/{conv}/contexts/{context}/render/``) and marks the strict input
serializers ``additionalProperties: false``, since they reject unknown fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from compaction import strategies
from timeline_app.api.fields import PYTHON_WHITESPACE, StrictSerializer
from timeline_app.domain import identifiers
from timeline_app.selectors.contexts import custom_strategies

CONV_PATTERN = identifiers.CONVERSATION_ID_PATTERN.pattern
CONTEXT_PATTERN = identifiers.CONTEXT_NAME_PATTERN.pattern


class ErrorBodyOut(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="stable machine code, e.g. `invalid`, `not_found`")
    message = serializers.CharField()
    details = serializers.JSONField(help_text="per-field messages or other facts about the error")


class ErrorOut(serializers.Serializer[Any]):
    error = ErrorBodyOut()


ERRORS: dict[int, str] = {
    400: "Invalid input",
    401: "Missing or wrong API key",
    404: "No such conversation or context for this key",
    409: "Conflict with what is stored (an id taken, a message stored with other content)",
    413: "Request body too large",
    429: "Too many requests",
    503: "A dependency (PostgreSQL, Redis, the broker) is unreachable: retry after `Retry-After` seconds",
}
# Every operation needs a key and addresses the caller's own objects; most also read input.
COMMON_ERRORS = (400, 401, 404)

CONV_PARAM = OpenApiParameter(
    "conv",
    str,
    OpenApiParameter.PATH,
    pattern=CONV_PATTERN,
    description="The conversation's id.",
)
CONTEXT_PARAM = OpenApiParameter(
    "context",
    str,
    OpenApiParameter.PATH,
    pattern=CONTEXT_PATTERN,
    description="A named context; the paths without `contexts/{context}/` address `main`.",
)


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(ErrorOut, description=ERRORS[code]) for code in codes}


def operation(
    *,
    summary: str,
    responses: dict[int, Any],
    request: Any = None,
    parameters: Sequence[Any] = (),
    errors: Sequence[int] = COMMON_ERRORS,
    operation_id: str | None = None,
    description: str | None = None,
) -> Callable[[Any], Any]:
    """``extend_schema`` with the conversation and context path parameters (kept where the path
    has them) and the error responses ``errors`` in the one error shape (413 too with a body, and
    503 on every operation: any of them can meet a dependency outage)."""
    codes = (*errors, 413, 503) if request is not None else (*errors, 503)
    return extend_schema(
        summary=summary,
        description=description,
        request=request,
        parameters=[CONV_PARAM, CONTEXT_PARAM, *parameters],
        responses={**responses, **error_responses(*codes)},
        operation_id=operation_id,
    )


class ApiSchema(AutoSchema):
    def _get_parameters(self) -> list[dict[str, Any]]:
        variables = set(re.findall(r"{(\w+)}", self.path))
        return [
            parameter
            for parameter in super()._get_parameters()
            if parameter["in"] != OpenApiParameter.PATH or parameter["name"] in variables
        ]

    def _get_request_body(self, direction: str = "request") -> Any:
        body = super()._get_request_body(direction)  # type: ignore[no-untyped-call]
        serializer = self.get_request_serializer()
        strict = isinstance(serializer, StrictSerializer) or (
            isinstance(serializer, type) and issubclass(serializer, StrictSerializer)
        )
        if body is not None and strict:
            body["required"] = True  # every write takes a JSON object, `{}` at least
        return body

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> Any:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)  # type: ignore[no-untyped-call]
        if getattr(field, "allow_empty", True) is False and schema.get("type") == "array":
            schema.setdefault("minItems", 1)
        if (
            direction == "request"
            and isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and not field.allow_blank
            and schema.get("type") == "string"
            and not any(isinstance(v, RegexValidator) for v in field.validators)
        ):
            # DRF strips the value first: it needs a character that is not (Python's) whitespace.
            schema.setdefault("pattern", f"[^{PYTHON_WHITESPACE}]")
        return schema

    def _map_serializer(self, serializer: Any, direction: str, bypass_extensions: bool = False) -> Any:
        schema = super()._map_serializer(serializer, direction, bypass_extensions)  # type: ignore[no-untyped-call]
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
            schema.update(getattr(serializer, "openapi_extra", {}))
        return schema


# ---------------------------------------------------------------- fields whose schema reads settings


class BlockTextFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = "timeline_app.api.fields.BlockTextField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        schema = {"type": "string", "maxLength": settings.TIMELINE_MAX_BLOCK_TEXT_CHARS}
        if not self.target.allow_blank:
            schema["minLength"] = 1
        return schema


class Base64FieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = "timeline_app.api.fields.Base64Field"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        limit = settings.TIMELINE_MAX_ATTACHMENT_BYTES
        return {
            "type": "string",
            "format": "byte",
            "maxLength": 4 * ((limit + 2) // 3),
            "description": f"base64 of at most {limit} bytes",
        }


def strategy_schema(custom_names: Sequence[str]) -> dict[str, Any]:
    """The shapes ``compaction.strategies.normalize_strategy`` accepts, one per strategy."""
    count = {"type": "integer", "minimum": 1, "maximum": strategies.MAX_COUNT}

    def shape(name: str, properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [name]}, **properties},
            "required": ["name", *required],
            "additionalProperties": False,
        }

    shapes = [
        {"type": "object", "maxProperties": 0, "description": "the default: summarize"},
        shape(strategies.SUMMARIZE, {}),
        shape(strategies.TRUNCATE_OLDEST, {"max_messages": count}, ["max_messages"]),
        shape(
            strategies.SLIDING_WINDOW,
            {"window_size": count, "keep_system": {"type": "boolean"}},
            ["window_size"],
        ),
    ]
    if custom_names:
        shapes.append(
            {
                "type": "object",
                "properties": {"name": {"type": "string", "enum": sorted(custom_names)}},
                "required": ["name"],
                "additionalProperties": True,
                "description": "a custom strategy registered in TIMELINE_CUSTOM_STRATEGIES, with its parameters",
            }
        )
    return {"oneOf": shapes}


class StrategyFieldSchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = "timeline_app.api.fields.StrategyField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        return strategy_schema(list(custom_strategies()))


# ---------------------------------------------------------------- OpenAPI links (stateful clients)

CONVERSATION_PATH = "/api/v1/conversations/{conv}/"
CONTEXT_PATH = "/api/v1/conversations/{conv}/contexts/{context}/"
# The operations that create what the others address, and where the new id is in their answer.
CREATORS = {
    ("/api/v1/conversations/", "post", "201"): ({"conv": "$response.body#/id"}, CONVERSATION_PATH),
    ("/api/v1/conversations/import/", "post", "201"): ({"conv": "$response.body#/id"}, CONVERSATION_PATH),
    ("/api/v1/conversations/{conv}/contexts/", "post", "201"): (
        {"conv": "$request.path.conv", "context": "$response.body#/name"},
        CONTEXT_PATH,
    ),
}


# Not linked: their 404 can also mean a block path or a branch source that does not exist, which
# the created object does not provide.
UNLINKED = {
    ("{compaction}/", "get"),
    ("hide/", "post"),
    ("unhide/", "post"),
    ("blocks/", "get"),
    ("contexts/", "post"),
}


def add_links(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: an OpenAPI link from each creating operation to the
    operations on what it created (a new conversation: its main-context paths; a new context: its
    named-context paths), so generated clients and schemathesis' stateful phase can chain them."""
    paths = result.get("paths", {})
    for (path, method, status), (parameters, prefix) in CREATORS.items():
        response = paths.get(path, {}).get(method, {}).get("responses", {}).get(status)
        if response is None:
            continue
        links = {}
        for target, item in paths.items():
            if not target.startswith(prefix) or ("{context}" in target) != ("{context}" in prefix):
                continue
            for target_method, op in item.items():
                if any(target.endswith(tail) and target_method == m for tail, m in UNLINKED):
                    continue
                if target_method in ("get", "post", "put", "patch", "delete"):
                    links[op["operationId"]] = {"operationId": op["operationId"], "parameters": parameters}
        response["links"] = links
    return result
