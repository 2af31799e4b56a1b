"""ISO-8601 times as the seeds show them (``2026-02-09T02:14:32.676425Z``): one parser, one form."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_iso(value: str) -> datetime:
    """An aware datetime from ISO-8601 text; a trailing ``Z`` is UTC, and so is a time without offset.

    Raises ``ValueError`` for text that is not ISO-8601.
    """
    moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def iso_utc(moment: datetime) -> str:
    """``moment`` in UTC with microseconds and a ``Z``: the one stored form, which sorts as text."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def normalize_timestamp(value: str) -> str:
    """An ISO-8601 time in the one stored form (a time without offset is UTC)."""
    return iso_utc(parse_iso(value))
