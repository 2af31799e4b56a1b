"""Writes of the render history: one row per render (a preview writes none), and its trimming."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Subquery

from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.errors import ConversationErased
from timeline_app.models import RenderRecord, RenderUsage, Timeline
from timeline_app.rendering.pipeline import Rendered
from timeline_app.rendering.prefix import CacheReport
from timeline_app.rendering.window_shape import window_shape
from timeline_app.services.usage import RenderForecast


def render_record(
    *,
    timeline: Timeline,
    now: datetime,
    rendered: Rendered,
    report: CacheReport,
    settings_key: str,
    summary_seq: int | None,
    pruning_status: str,
    window: Sequence[BlockValue],
    compaction_id: int | None,
    inputs: dict[str, Any],
    forecast: RenderForecast | None = None,
    pruned_tokens: int = 0,
    format_name: str = "",
    model: str = "",
    system_text: str = "",
) -> RenderRecord:
    """Record one render under a new public id and trim the timeline's history to
    ``TIMELINE_RENDER_HISTORY_MAX`` in the same transaction: a timeline never holds more records
    than the cap, however fast it renders, and only its own records are deleted. The timeline row
    is locked for those few statements so concurrent renders of one timeline trim in turn (their
    counts add up). Of a conversation erased meanwhile (the erase holds the context's row until it
    commits) there is no row left to lock: ``ConversationErased``, never a record left behind.

    ``window`` (the blocks rendered, with their hide state) and ``inputs``
    (``recorded_inputs.render_inputs``) let the admin render it again: the record keeps the
    window's shape (``window_shape.window_shape``), not its blocks. ``forecast`` and the rest are the
    usage forecast's and the cache-reading compaction's (``services/usage.py``)."""
    prefix = rendered.prefix
    fingerprint = prefix.fingerprint()
    shape = window_shape(window)  # before the lock: O(window) in Python
    with transaction.atomic(durable=True):  # a render commits its own writes (never a caller's)
        # Touching the cache clock locks the context's row (``FOR NO KEY UPDATE``, as any UPDATE
        # that leaves its key alone: concurrent renders and an erase's ``FOR UPDATE`` wait).
        if not _cache_clock_touch(timeline_id=timeline.pk, now=now):
            raise ConversationErased("the conversation was erased", details={"conversation": "erased"})
        timeline.cache_last_touch_at = now
        record = RenderRecord.objects.create(
            timeline=timeline,
            rendered_at=now,
            reason=report.reason,
            previous_render_at=report.previous_render_at,
            reused_prefix_tokens=report.reused_prefix_tokens,
            first_changed_index=report.first_changed_index,
            first_changed_path=report.first_changed_path or "",
            system_tokens=rendered.tokens["system"],
            visible_tokens=rendered.tokens["visible"],
            tail_tokens=rendered.tokens["tail"],
            total_tokens=rendered.tokens["total"],
            prefix_tokens=prefix.total_tokens,
            cache_points=list(rendered.cache_points),
            pruning_status=pruning_status,
            hidden_count=shape.hidden_count,
            compaction_id=compaction_id,
            summary_seq=summary_seq,
            settings_key=settings_key,
            segment_count=fingerprint.count,
            segment_stride=fingerprint.stride,
            segment_digests=fingerprint.digests,
            segment_seqs=fingerprint.seq_digests,
            segment_seed=fingerprint.seed,
            window_first_seq=shape.first_seq,
            window_last_seq=shape.last_seq,
            window_skipped_seqs=shape.skipped_seqs,
            hidden_seqs=shape.hidden_seqs,
            render_inputs=inputs,
            public_id=RenderRecord.new_public_id(),
            usage_forecast=forecast.as_dict() if forecast is not None else {},
            cache_head=forecast.cache_head if forecast is not None else "",
            cache_touched=forecast.cache_touched if forecast is not None else [],
            pruned_tokens=pruned_tokens,
            format=format_name,
            model=model,
            system_text=system_text,
        )
        timeline_history_trim(timeline=timeline, keep=settings.TIMELINE_RENDER_HISTORY_MAX)
    return record


def _cache_clock_touch(*, timeline_id: int, now: datetime) -> bool:
    """``Timeline.objects.filter(pk=…).update(cache_last_touch_at=now)`` as the constant statement
    it sends: compiling that queryset cost more of a render's CPU than the UPDATE (issue 38).
    False when the row is gone (an erase committed first)."""
    sql = 'UPDATE "{0}" SET "{1}" = %s WHERE "{0}"."{2}" = %s'.format(
        Timeline._meta.db_table,
        Timeline._meta.get_field("cache_last_touch_at").column,
        Timeline._meta.pk.column,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [connection.ops.adapt_datetimefield_value(now), timeline_id])
        return bool(cursor.rowcount > 0)


_TRIM_SQL = """
WITH gone AS (
    DELETE FROM {records} WHERE timeline_id = %(timeline)s AND id < (
        SELECT id FROM {records} WHERE timeline_id = %(timeline)s ORDER BY id DESC OFFSET %(skip)s LIMIT 1
    )
    RETURNING id
), unlinked AS (
    UPDATE {usages} SET render_id = NULL
    WHERE timeline_id = %(timeline)s AND render_id IN (SELECT id FROM gone)
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM unlinked)
"""


def timeline_history_trim(*, timeline: Timeline, keep: int) -> int:
    """Delete all but the newest ``keep`` records of this one timeline: its cutoff (the
    ``keep``-th newest id, read off the ``(timeline, -id)`` index) is a subquery, NULL and so
    deleting nothing while the timeline has fewer. On PostgreSQL one statement that also unlinks
    their usage reports (``render`` set NULL, as ``on_delete`` says); Django's ``delete()`` read
    every record first to do that, a statement more per render even when nothing went (issue 38)."""
    if connection.vendor == "postgresql":
        sql = _TRIM_SQL.format(records=RenderRecord._meta.db_table, usages=RenderUsage._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(sql, {"timeline": timeline.pk, "skip": keep - 1})
            row = cursor.fetchone()
        return int(row[0]) if row is not None else 0
    rows = RenderRecord.objects.filter(timeline=timeline)
    cutoff = rows.order_by("-id").values("id")[keep - 1 : keep]
    deleted, _ = rows.filter(id__lt=Subquery(cutoff)).delete()
    return deleted


def render_history_trim(*, now: datetime, keep: int, days: float) -> int:
    """Delete records older than ``days``, then all but the newest ``keep`` of each timeline (the
    beat job: the age limit, and the count for a cap lowered since the records were written;
    every render already trims its own timeline to the cap). Returns how many went."""
    deleted, _ = RenderRecord.objects.filter(rendered_at__lt=now - timedelta(days=days)).delete()
    crowded = (
        RenderRecord.objects.values("timeline")
        .annotate(n=Count("id"))
        .filter(n__gt=keep)
        .values_list("timeline", flat=True)
    )
    for timeline_id in list(crowded):
        newest = (
            RenderRecord.objects.filter(timeline_id=timeline_id).order_by("-id").values_list("id", flat=True)
        )
        cutoff = newest[keep - 1] if keep > 0 else None
        rows = RenderRecord.objects.filter(timeline_id=timeline_id)
        count, _ = (rows.filter(id__lt=cutoff) if cutoff is not None else rows).delete()
        deleted += count
    return deleted
