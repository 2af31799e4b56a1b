"""Strict DRF fields: a number is not a string, a string is not a boolean.

Each field declares in the OpenAPI schema exactly what it accepts (``extend_schema_field``), so a
client generated from the schema sends nothing the service rejects.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from timeline_app.domain.blocks import PATH_PATTERN
from timeline_app.domain.message_validation import storable_problems
from timeline_app.domain.meta import meta_problem
from timeline_app.domain.settings import (
    BOOL_SETTINGS,
    FREE_TEXT_SETTINGS,
    SETTING_RANGES,
    TEXT_SETTINGS,
    SettingsError,
    validate_overrides,
)
from timeline_app.domain.times import parse_iso
from timeline_app.errors import DomainError
from timeline_app.services.blocks import meta_limits
from timeline_app.services.compaction import summary_model_problem
from timeline_app.services.contexts import normalize_strategy
from timeline_app.services.model_lifecycle import warn_if_retired

# RFC 3339 as Python reads it and PostgreSQL stores it: upper-case T and Z, seconds 00–59, offsets up
# to ±14:00 (PostgreSQL refuses ±16:00), years 1000–8999 so that every time stays in range in UTC.
MAX_OFFSET = timedelta(hours=14)
DATE_TIME_PATTERN = (
    r"^[1-8][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{1,6})?(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)$"
)
# PATH_PATTERN (``^(ar|fi|tc|su|so):[^\s]{1,1000}$``) with Python's ``\s`` spelled out: a JSON
# Schema pattern is an ECMA regex, whose ``\s`` misses U+001C–U+001F and U+0085.
PYTHON_WHITESPACE = r"\t\n\v\f\r \u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
PATH_SYNTAX = f"^(ar|fi|tc|su|so):[^{PYTHON_WHITESPACE}]{{1,1000}}$"


def check_storable(value: Any) -> None:
    """Every string in ``value`` (object keys too) can be stored: no NUL, no lone surrogate (the
    rule of ``domain.message_validation.storable_problems``, as a field validation error)."""
    problems = storable_problems(value)
    if problems:
        raise serializers.ValidationError(sorted(set(problems.values())))


class StrictCharField(serializers.CharField):
    def __init__(self, *, regex: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if regex is not None:
            self.validators.append(RegexValidator(regex, message=f"must match {regex}"))

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        check_storable(data)
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class StrictDictField(serializers.DictField):
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("not_a_dict", input_type=type(data).__name__)
        check_storable(data)
        return dict(super().to_internal_value(data))


class MetaField(StrictDictField):
    """A stored ``meta`` object, capped in bytes, keys and depth (``domain.meta``), checked before
    its members are validated one by one."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict) and (problem := meta_problem(data, meta_limits())):
            raise serializers.ValidationError(problem)
        return super().to_internal_value(data)


MAX_PAGE = 200  # the most rows a cursor-paginated list answers at once


def page_limit_field() -> serializers.IntegerField:
    """A list's ``limit``: 1 to ``MAX_PAGE`` rows a page, 50 when not given."""
    return serializers.IntegerField(required=False, min_value=1, max_value=MAX_PAGE, default=50)


@extend_schema_field({"type": "string", "format": "decimal", "pattern": r"^\d{1,12}(?:\.\d{1,12})?$"})
class DollarsField(serializers.DecimalField):
    """A non-negative amount of dollars, exact (12 places each side), written as a string: the
    schema says "no minus sign", which DRF's own decimal schema (``-?``) does not."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_digits=24, decimal_places=12, min_value=0, **kwargs)


@extend_schema_field({"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN})
class IsoDateTimeStringField(StrictCharField):
    """An ISO-8601 time kept as the client wrote it (byte-stable rendering)."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value == "" and self.allow_blank:
            return value
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            parse_iso(value)
        except (ValueError, OverflowError) as exc:
            raise serializers.ValidationError(f"not an ISO-8601 time in range: {exc}") from exc
        offset = moment.utcoffset()
        if offset is not None and abs(offset) > MAX_OFFSET:
            raise serializers.ValidationError("the UTC offset must be at most ±14:00")
        return value


@extend_schema_field(
    {
        "type": "string",
        "maxLength": 40,
        "anyOf": [{"maxLength": 0}, {"format": "date-time", "pattern": DATE_TIME_PATTERN}],
    }
)
class OptionalIsoDateTimeStringField(IsoDateTimeStringField):
    """Empty, or an ISO-8601 time (a stored block's ``ts`` may be empty)."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("max_length", 40)
        super().__init__(**kwargs)


PATH_SCHEMA = {"type": "string", "minLength": 4, "maxLength": 1003, "pattern": PATH_SYNTAX}


@extend_schema_field(PATH_SCHEMA)
class BlockPathField(StrictCharField):
    """A block path: ``<ar|fi|tc|su|so>:<rest>`` without whitespace (blank when ``allow_blank``)."""

    def __init__(self, **kwargs: Any):
        super().__init__(max_length=1024, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value and not PATH_PATTERN.match(value):
            raise serializers.ValidationError("a path is '<ar|fi|tc|su|so>:<rest>' without spaces")
        return value


@extend_schema_field({**PATH_SCHEMA, "minLength": 0, "pattern": f"^({PATH_SYNTAX[1:-1]})?$"})
class OptionalBlockPathField(BlockPathField):
    def __init__(self, **kwargs: Any):
        super().__init__(required=False, allow_blank=True, default="", **kwargs)


class BlockTextField(StrictCharField):
    """Text of a block, at most ``TIMELINE_MAX_BLOCK_TEXT_CHARS`` (schema: ``schema.py``)."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("allow_blank", True)
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        limit = settings.TIMELINE_MAX_BLOCK_TEXT_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(f"text over the limit of {limit} characters")
        return value


class Base64Field(StrictCharField):
    """Base64 text in, bytes out, at most ``TIMELINE_MAX_ATTACHMENT_BYTES`` (schema: ``schema.py``)."""

    def __init__(self, **kwargs: Any):
        super().__init__(required=False, allow_blank=True, trim_whitespace=False, default="", **kwargs)

    def to_internal_value(self, data: Any) -> bytes:  # type: ignore[override]
        value = super().to_internal_value(data)
        if not value:
            return b""
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise serializers.ValidationError("not valid base64") from exc
        if len(raw) > settings.TIMELINE_MAX_ATTACHMENT_BYTES:
            raise serializers.ValidationError(
                f"binary payload over the limit of {settings.TIMELINE_MAX_ATTACHMENT_BYTES} bytes"
            )
        return raw


class StrategyField(StrictDictField):
    """A compaction strategy config, normalised (schema: ``schema.py``, custom names included)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        if not value:
            return value  # `{}`: the default (summarize), stored as given
        try:
            return normalize_strategy(value)
        except DomainError as exc:
            raise serializers.ValidationError(exc.details) from exc


def _setting_schema(key: str, low: float, high: float) -> dict[str, Any]:
    kind = "number" if key == "threshold" else "integer"
    schema: dict[str, Any] = {"type": kind, "minimum": low, "maximum": high}
    if key == "keep_recent_tokens":
        schema["nullable"] = True
        schema["description"] = (
            "at most max_tokens (the one given with it, else 200000); null: 0.3 × max_tokens"
        )
    return schema


SETTINGS_SCHEMA = {
    "type": "object",
    "description": "Overrides of the render and compaction settings (DESIGN §4).",
    "properties": {
        **{key: _setting_schema(key, low, high) for key, (low, high) in SETTING_RANGES.items()},
        **{
            key: {
                "type": "string",
                "pattern": pattern,
                "nullable": True,
                "description": "the summarizer's model for this conversation, of the configured provider",
            }
            for key, pattern in TEXT_SETTINGS.items()
        },
        **{
            key: {
                "type": "string",
                "minLength": 1,
                "maxLength": limit,
                "description": "native formats: the text of the user message a render ends with when "
                "the history ends with the model's (default `Continue.`)",
            }
            for key, limit in FREE_TEXT_SETTINGS.items()
        },
        **{
            key: {
                "type": "boolean",
                "description": "end every render's uncached tail with one line of the context's budget",
            }
            for key in BOOL_SETTINGS
        },
    },
    "additionalProperties": False,
}


@extend_schema_field(SETTINGS_SCHEMA)
class SettingsField(StrictDictField):
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        try:
            clean = validate_overrides(value)
        except SettingsError as exc:
            raise serializers.ValidationError(exc.details) from exc
        model = clean.get("summary_model")
        if model is not None:
            problem = summary_model_problem(model)
            if problem:
                raise serializers.ValidationError({"summary_model": problem})
            warn_if_retired(model, where="conversation summary_model setting")
        return clean


# Rejects fields it does not know, so a typo never silently does nothing. (A comment, not a
# docstring: drf-spectacular would show it as every input schema's description.)
class StrictSerializer(serializers.Serializer[Any]):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["unknown field"] for name in unknown})
        return super().to_internal_value(data)


def blocks_cap_check(data: Any, *, limit: int, per: str) -> None:
    """Refuse a body with more than ``limit`` ``blocks`` before any block is validated (an
    oversized body costs nothing); the limit is read at request time."""
    blocks = data.get("blocks") if isinstance(data, dict) else None
    if isinstance(blocks, list) and len(blocks) > limit:
        raise serializers.ValidationError({"blocks": [f"at most {limit} blocks per {per}"]})
