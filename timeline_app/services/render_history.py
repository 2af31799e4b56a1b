"""Writes of the render history: one row per render that is not a dry run, and its trimming."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count

from timeline_app.models import RenderRecord, Timeline
from timeline_app.rendering.pipeline import Rendered
from timeline_app.rendering.prefix import CacheReport
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
    hidden_count: int,
    compaction_id: int | None,
    forecast: RenderForecast | None = None,
    pruned_tokens: int = 0,
    format_name: str = "",
    model: str = "",
    system_text: str = "",
) -> RenderRecord:
    """Record one render (one INSERT, whatever the timeline's length) under a new public id."""
    prefix = rendered.prefix
    return RenderRecord.objects.create(
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
        hidden_count=hidden_count,
        compaction_id=compaction_id,
        summary_seq=summary_seq,
        settings_key=settings_key,
        segment_count=len(prefix.digests),
        segment_digests=prefix.packed_digests(),
        segment_seqs=prefix.packed_seqs(),
        public_id=RenderRecord.new_public_id(),
        usage_forecast=forecast.as_dict() if forecast is not None else {},
        cache_head=forecast.cache_head if forecast is not None else "",
        cache_touched=forecast.cache_touched if forecast is not None else [],
        pruned_tokens=pruned_tokens,
        format=format_name,
        model=model,
        system_text=system_text,
    )


def render_history_trim(*, now: datetime, keep: int, days: float) -> int:
    """Delete records older than ``days``, then all but the newest ``keep`` of each timeline (the
    beat job; one DELETE per timeline over the count). Returns how many went."""
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
