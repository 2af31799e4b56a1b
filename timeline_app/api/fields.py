"""Strict DRF fields: a number is not a string, a string is not a boolean."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers


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


class IsoDateTimeStringField(StrictCharField):
    """An ISO-8601 time kept as the client wrote it (byte-stable rendering)."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise serializers.ValidationError("not an ISO-8601 time") from exc
        return value


class StrictSerializer(serializers.Serializer[Any]):
    """Rejects fields it does not know, so a typo never silently does nothing."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["unknown field"] for name in unknown})
        return super().to_internal_value(data)
