"""ISO-8601 times as the seeds show them (``2026-02-09T02:14:32.676425Z``): one parser, one form.

Every time a client sends is bounded, after conversion to UTC, to ``EARLIEST``…``LATEST``: a range
that Python, the database driver and the time arithmetic around it (TTLs, offsets) all round-trip.
Without the bound, ``0001-01-01T00:00:00+14:00`` is year 0 in UTC: the database stores it, and
reading it back fails forever after.
"""

from __future__ import annotations

from datetime import UTC, datetime

EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
RANGE_TEXT = "between 0001-01-02T00:00:00Z and 9998-12-31T23:59:59Z"


def parse_iso(value: str) -> datetime:
    """An aware datetime from ISO-8601 text; a trailing ``Z`` is UTC, and so is a time without offset.

    Raises ``ValueError`` for text that is not ISO-8601 or a time outside ``EARLIEST``…``LATEST``.
    """
    if "\x00" in value:
        raise ValueError("not an ISO-8601 time")
    moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        in_utc = moment.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"time out of range: must be {RANGE_TEXT}") from exc
    if not EARLIEST <= in_utc <= LATEST:
        raise ValueError(f"time out of range: must be {RANGE_TEXT}")
    return moment


def iso_utc(moment: datetime) -> str:
    """``moment`` in UTC with microseconds and a ``Z``: the one stored form, which sorts as text."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def normalize_timestamp(value: str) -> str:
    """An ISO-8601 time in the one stored form (a time without offset is UTC)."""
    return iso_utc(parse_iso(value))
