"""Cursor-paginated listings of one context: its blocks (by ``seq``), its compactions and its
operations log (newest first). Both read one page plus one row, to know whether a next page exists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from timeline_app.errors import NotFound
from timeline_app.models import Block, Compaction, Operation, Timeline

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    rows: list[T]
    has_more: bool


def blocks_page(
    *,
    timeline: Timeline,
    after_seq: int,
    limit: int,
    type: str | None = None,
    turn_id: str | None = None,
    hidden: bool | None = None,
) -> Page[Block]:
    """Every stored block of the context (hidden, compacted and cleared ones included) with a seq
    above ``after_seq``, in seq order. Served by the ``(timeline, seq)`` unique index, or the
    ``(timeline, type, seq)`` / ``(timeline, turn_id, seq)`` ones when filtered by type or turn."""
    rows = Block.objects.filter(timeline=timeline, seq__gt=after_seq)
    if type is not None:
        rows = rows.filter(type=type)
    if turn_id is not None:
        rows = rows.filter(turn_id=turn_id)
    if hidden is not None:
        rows = rows.filter(hidden=hidden)
    found = list(rows.order_by("seq")[: limit + 1])
    return Page(rows=found[:limit], has_more=len(found) > limit)


def compaction_get(*, timeline: Timeline, public_id: str) -> Compaction | None:
    return (
        Compaction.objects.filter(timeline=timeline, public_id=public_id)
        .select_related("summary_block")
        .first()
    )


def compaction_by_pk(*, timeline: Timeline, pk: int | None) -> Compaction | None:
    if pk is None:
        return None
    return Compaction.objects.filter(timeline=timeline, pk=pk).select_related("summary_block").first()


def compactions_page(*, timeline: Timeline, before: str | None, limit: int) -> Page[Compaction]:
    """The context's compactions, newest first; ``before``: the public id of the last one of the
    previous page (not one of this context's: a 404)."""
    rows = Compaction.objects.filter(timeline=timeline)
    if before is not None:
        anchor = rows.filter(public_id=before).values_list("pk", flat=True).first()
        if anchor is None:
            raise NotFound("cursor names no compaction of this context", details={"cursor": before})
        rows = rows.filter(pk__lt=anchor)
    found = list(rows.select_related("summary_block").order_by("-pk")[: limit + 1])
    return Page(rows=found[:limit], has_more=len(found) > limit)


def operations_page(
    *,
    timeline: Timeline,
    before: str | None,
    limit: int,
    kinds: tuple[str, ...] = (),
    since: datetime | None = None,
    until: datetime | None = None,
) -> Page[Operation]:
    """The context's operations log, newest first, of ``kinds`` (all when empty) at ``since`` or
    later and before ``until``; ``before``: the public id of the last entry of the previous page
    (not one of this context's: a 404). Served by the ``(timeline, -id)`` index: a context holds at
    most ``TIMELINE_OPERATIONS_LOG_MAX`` entries."""
    rows = Operation.objects.filter(timeline=timeline)
    if before is not None:
        anchor = rows.filter(public_id=before).values_list("pk", flat=True).first()
        if anchor is None:
            raise NotFound("cursor names no operation of this context", details={"cursor": before})
        rows = rows.filter(pk__lt=anchor)
    if kinds:
        rows = rows.filter(kind__in=kinds)
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lt=until)
    found = list(rows.order_by("-pk")[: limit + 1])
    return Page(rows=found[:limit], has_more=len(found) > limit)
