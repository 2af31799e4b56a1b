"""Strict DRF fields: a number is not a string, a string is not a boolean."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from timeline_app.errors import InvalidInput
from timeline_app.rendering.message_validation import storable_problems
from timeline_app.rendering.times import parse_iso


def query_text(value: str, name: str) -> str:
    """A query parameter's text, rejected (400) when the database could not compare it (NUL)."""
    problems = storable_problems(value, name)
    if problems:
        raise InvalidInput(f"{name} holds a character that cannot be stored", details=problems)
    return value


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
        problems = storable_problems(data, self.field_name or "value")
        if problems:
            raise serializers.ValidationError(problems)
        return dict(super().to_internal_value(data))


class IsoDateTimeStringField(StrictCharField):
    """An ISO-8601 time kept as the client wrote it (byte-stable rendering)."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value == "" and self.allow_blank:
            return value
        try:
            parse_iso(value)
        except ValueError as exc:
            raise serializers.ValidationError(f"not an ISO-8601 time in range: {exc}") from exc
        return value


class StrictSerializer(serializers.Serializer[Any]):
    """Rejects fields it does not know, so a typo never silently does nothing."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["unknown field"] for name in unknown})
        return super().to_internal_value(data)
