"""Strict DRF fields: a number is not a string, a string is not a boolean.

Each field declares in the OpenAPI schema exactly what it accepts (``extend_schema_field``), so a
client generated from the schema sends nothing the service rejects.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from timeline_app.errors import DomainError
from timeline_app.rendering.blocks import PATH_PATTERN
from timeline_app.rendering.settings import SETTING_RANGES, SettingsError, validate_overrides
from timeline_app.services.messages import normalize_strategy

# RFC 3339 as Python reads it: upper-case T and Z, seconds 00–59, an offset or Z; years 1000–8999
# so that every accepted time stays in range after conversion to UTC.
DATE_TIME_PATTERN = (
    r"^[1-8][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9](\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
PATH_SYNTAX = PATH_PATTERN.pattern


class StrictCharField(serializers.CharField):
    def __init__(self, *, regex: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if regex is not None:
            self.validators.append(RegexValidator(regex, message=f"must match {regex}"))

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
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
        return dict(super().to_internal_value(data))


def parse_iso(value: str) -> datetime:
    """An ISO-8601 time; a time without an offset is UTC."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@extend_schema_field({"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN})
class IsoDateTimeStringField(StrictCharField):
    """An ISO-8601 time kept as the client wrote it (byte-stable rendering)."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        try:
            parse_iso(value).astimezone(UTC)
        except (ValueError, OverflowError) as exc:
            raise serializers.ValidationError("not an ISO-8601 time") from exc
        return value


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
    return schema


SETTINGS_SCHEMA = {
    "type": "object",
    "description": "Overrides of the render and compaction settings (DESIGN §4).",
    "properties": {key: _setting_schema(key, low, high) for key, (low, high) in SETTING_RANGES.items()},
    "additionalProperties": False,
}


@extend_schema_field(SETTINGS_SCHEMA)
class SettingsField(StrictDictField):
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        try:
            return validate_overrides(value)
        except SettingsError as exc:
            raise serializers.ValidationError(exc.details) from exc


# Rejects fields it does not know, so a typo never silently does nothing. (A comment, not a
# docstring: drf-spectacular would show it as every input schema's description.)
class StrictSerializer(serializers.Serializer[Any]):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["unknown field"] for name in unknown})
        return super().to_internal_value(data)
