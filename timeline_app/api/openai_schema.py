"""The OpenAPI schema of one OpenAI chat message, as ``services.messages.parse_messages`` checks it.

Kept beside the API: the service is the one that enforces it, this module only declares it (a
change there needs one here, and ``tests/api/test_schema.py`` fuzzes both against each other).
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings

from timeline_app.api.fields import DATE_TIME_PATTERN
from timeline_app.domain.messages import MAX_ID_CHARS, MAX_NAME_CHARS, MESSAGE_ID_PATTERN


def _object(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return {**schema, **extra}


def _enum(value: str) -> dict[str, Any]:
    return {"type": "string", "enum": [value]}


DATA_MAX = math.ceil(settings.TIMELINE_MAX_ATTACHMENT_BYTES / 3) * 4 + 256
NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS}
CALL_ID = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}

PARTS: dict[str, dict[str, Any]] = {
    "text": _object({"type": _enum("text"), "text": {"type": "string"}}, ("type", "text")),
    "refusal": _object({"type": _enum("refusal"), "refusal": {"type": "string"}}, ("type", "refusal")),
    "image_url": _object(
        {
            "type": _enum("image_url"),
            "image_url": _object(
                {
                    "url": {"type": "string", "minLength": 1, "maxLength": DATA_MAX},
                    "detail": {"type": "string", "enum": ["auto", "low", "high"]},
                },
                ("url",),
            ),
        },
        ("type", "image_url"),
    ),
    "input_audio": _object(
        {
            "type": _enum("input_audio"),
            "input_audio": _object(
                {
                    "data": {"type": "string", "maxLength": DATA_MAX},
                    "format": {"type": "string", "enum": ["wav", "mp3"]},
                },
                ("data", "format"),
            ),
        },
        ("type", "input_audio"),
    ),
    "file": _object(
        {
            "type": _enum("file"),
            "file": _object(
                {
                    "file_data": {"type": "string", "maxLength": DATA_MAX},
                    "file_id": {"type": "string"},
                    "filename": {"type": "string"},
                },
                anyOf=[{"required": ["file_data"]}, {"required": ["file_id"]}],
            ),
        },
        ("type", "file"),
    ),
}


def _content(*kinds: str) -> dict[str, Any]:
    parts = {"type": "array", "minItems": 1, "items": {"oneOf": [PARTS[kind] for kind in kinds]}}
    return {"oneOf": [{"type": "string"}, parts]}


TOOL_CALL = _object(
    {
        "id": CALL_ID,
        "type": _enum("function"),
        "function": _object({"name": NAME, "arguments": {"type": "string"}}, ("name", "arguments")),
    },
    ("id", "type", "function"),
)

ADDED = {
    "message_id": {"type": "string", "pattern": MESSAGE_ID_PATTERN.pattern},
    "timestamp": {"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN},
}

USER = _object(
    {
        "role": _enum("user"),
        "content": _content("text", "image_url", "input_audio", "file"),
        "name": NAME,
        **ADDED,
    },
    ("role", "content"),
)
SYSTEM = _object(
    {"role": _enum("system"), "content": _content("text"), "name": NAME, **ADDED}, ("role", "content")
)
TOOL = _object(
    {"role": _enum("tool"), "content": _content("text"), "tool_call_id": CALL_ID, "name": NAME, **ADDED},
    ("role", "content", "tool_call_id"),
)
ASSISTANT = _object(
    {
        "role": _enum("assistant"),
        "content": {**_content("text", "refusal"), "nullable": True},
        "name": NAME,
        "tool_calls": {"type": "array", "minItems": 1, "items": TOOL_CALL},
        "refusal": {"type": "string", "nullable": True},
        **ADDED,
    },
    ("role",),
    # content, tool_calls or a refusal text
    anyOf=[
        {"required": ["content"], "properties": {"content": _content("text", "refusal")}},
        {"required": ["tool_calls"]},
        {"required": ["refusal"], "properties": {"refusal": {"type": "string"}}},
    ],
)

MESSAGE_SCHEMA: dict[str, Any] = {
    "oneOf": [USER, ASSISTANT, TOOL, SYSTEM],
    "description": (
        "An OpenAI chat message (roles user, assistant, tool, system), optionally with `message_id` "
        "(sending it again stores nothing new) and `timestamp`. Tool call ids are unique within a "
        "message, message ids within a request; no string may hold a NUL character."
    ),
}

STORED_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "the message as it was given, plus `timestamp` and `message_id`",
    "properties": {
        "role": {"type": "string", "enum": ["user", "assistant", "tool", "system"]},
        "message_id": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
    },
    "required": ["role", "message_id", "timestamp"],
    "additionalProperties": True,
}
