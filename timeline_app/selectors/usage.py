"""Reads for the cost model: the provider cache the forecast starts from, reported usage, totals."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from timeline_app.domain.times import parse_iso
from timeline_app.models import Conversation, RenderRecord, RenderUsage, Tenant, Timeline
from timeline_app.rendering.prefix import stored_checkpoints
from timeline_app.rendering.usage.forecast import ONE_HOUR, TWELVE_HOURS, CacheState, Provider

# The recent renders the forecast reads: Anthropic entries live at most an hour past their last
# touch, and every render re-touches what it reads, so the newest few dozen hold every live entry;
# OpenAI compares with the last few prompts (the newest shares the longest prefix but after an edit).
ANTHROPIC_RECENT = 32
OPENAI_RECENT = 4


def cache_state(
    *, timeline: Timeline, provider: Provider, now: datetime, retention_seconds: int, explicit: bool = False
) -> CacheState:
    """The provider cache of this context as the forecast believes it before a render at ``now``
    (one query). ``explicit``: OpenAI's breakpoint entries (GPT-5.6), read like Anthropic's."""
    rows = RenderRecord.objects.filter(timeline=timeline).order_by("-id")
    if provider == "anthropic" or explicit:
        entries: dict[bytes, datetime] = {}
        longest = ONE_HOUR if provider == "anthropic" else TWELVE_HOURS
        recent = rows.filter(rendered_at__gte=now - timedelta(seconds=longest), rendered_at__lte=now)
        for touched in recent.values_list("cache_touched", flat=True)[:ANTHROPIC_RECENT]:
            for digest_hex, expires in touched or ():
                digest, at = bytes.fromhex(digest_hex), parse_iso(expires)
                entries[digest] = max(at, entries.get(digest, at))
        return CacheState(entries=entries)
    recent = rows.filter(rendered_at__gte=now - timedelta(seconds=retention_seconds), rendered_at__lte=now)
    prompts = []
    fields = ("rendered_at", "cache_head", "segment_digests", "segment_stride", "segment_count")
    for at, head, packed, stride, count in recent.values_list(*fields)[:OPENAI_RECENT]:
        # The record's bounded fingerprint: every segment up to 1,024, then one checkpoint per
        # chunk (``prefix.Fingerprint``); the request's block 0 is the head when it has one.
        checkpoints = stored_checkpoints(bytes(packed), stride=stride, count=count)
        if head:
            checkpoints = [(0, bytes.fromhex(head)), *((i + 1, digest) for i, digest in checkpoints)]
        prompts.append((at, checkpoints))
    return CacheState(prompts=prompts)


def render_for_usage(*, timeline: Timeline, render_id: str) -> RenderRecord | None:
    """A render of this context by its public id (another context's or tenant's is None)."""
    return (
        RenderRecord.objects.filter(timeline=timeline, public_id=render_id)
        .select_related("compaction")
        .defer("segment_digests", "segment_seqs", "segment_seed", "window_skipped_seqs", "hidden_seqs")
        .first()
    )


def last_render_for_summary(*, timeline: Timeline) -> RenderRecord | None:
    """The context's latest render with what a summary request needs to resend its prefix."""
    return (
        RenderRecord.objects.filter(timeline=timeline)
        .order_by("-id")
        .only(
            "rendered_at",
            "format",
            "model",
            "system_text",
            "cache_points",
            "segment_digests",
            "segment_stride",
            "segment_count",
        )
        .first()
    )


def usage_for_render(*, timeline: Timeline, render_id: str) -> RenderUsage | None:
    return RenderUsage.objects.filter(timeline=timeline, render_public_id=render_id).first()


TOTALS = {
    "renders": Count("id"),
    "uncached_input_tokens": Sum("uncached_input_tokens"),
    "cache_read_tokens": Sum("cache_read_tokens"),
    "cache_write_5m_tokens": Sum("cache_write_5m_tokens"),
    "cache_write_1h_tokens": Sum("cache_write_1h_tokens"),
    "output_tokens": Sum("output_tokens"),
    "forecast_read_tokens": Sum("forecast_read_tokens"),
    "cost_usd": Sum("cost_usd"),
    "cost_without_cache_usd": Sum("cost_without_cache_usd"),
    "unpriced_renders": Count("id", filter=Q(priced_model="")),
    "unexplained_misses": Count("id", filter=Q(unexplained_miss=True)),
    "forecast_agreed": Count("id", filter=Q(forecast_agreed=True)),
    "compacted_tokens": Sum("compacted_tokens"),
    "pruned_tokens": Sum("pruned_tokens"),
}


def usage_totals(rows: QuerySet[RenderUsage]) -> dict[str, Any]:
    """Sums over ``rows`` (one aggregate query); empty sums are 0."""
    totals = rows.order_by().aggregate(**TOTALS)
    return {key: (value if value is not None else 0) for key, value in totals.items()}


def conversation_usages(
    *, conversation: Conversation, timeline: Timeline | None = None
) -> QuerySet[RenderUsage]:
    rows = RenderUsage.objects.filter(conversation=conversation)
    return rows.filter(timeline=timeline) if timeline is not None else rows


def unexplained_misses(*, rows: QuerySet[RenderUsage], limit: int) -> list[RenderUsage]:
    return list(
        rows.filter(unexplained_miss=True).select_related("timeline").order_by("-rendered_at", "-id")[:limit]
    )


def tenant_usage_by_conversation(
    *, tenant: Tenant, since: datetime | None, until: datetime | None
) -> QuerySet[Conversation]:
    """The tenant's conversations with reported usage in ``[since, until)``, each annotated with
    its totals over that range (``usage_<total>``), for cursor pagination on ``-id``. The filter
    comes before the annotations, so they sum only the usage rows it kept."""
    # ``usages__isnull``: only conversations with usage, whatever else the window names (the
    # tenant lookup serves the (tenant, rendered_at) index; the stripped-filter re-run of
    # docs/testing.md drops it and must still get the same rows).
    window: dict[str, Any] = {"usages__tenant": tenant, "usages__isnull": False}
    if since is not None:
        window["usages__rendered_at__gte"] = since
    if until is not None:
        window["usages__rendered_at__lt"] = until
    return Conversation.objects.filter(tenant=tenant, **window).annotate(
        usage_renders=Count("usages"),
        usage_uncached_input_tokens=Sum("usages__uncached_input_tokens"),
        usage_cache_read_tokens=Sum("usages__cache_read_tokens"),
        usage_cache_write_5m_tokens=Sum("usages__cache_write_5m_tokens"),
        usage_cache_write_1h_tokens=Sum("usages__cache_write_1h_tokens"),
        usage_output_tokens=Sum("usages__output_tokens"),
        usage_forecast_read_tokens=Sum("usages__forecast_read_tokens"),
        usage_cost_usd=Sum("usages__cost_usd"),
        usage_cost_without_cache_usd=Sum("usages__cost_without_cache_usd"),
        usage_unpriced_renders=Count("usages", filter=Q(usages__priced_model="")),
        usage_unexplained_misses=Count("usages", filter=Q(usages__unexplained_miss=True)),
        usage_forecast_agreed=Count("usages", filter=Q(usages__forecast_agreed=True)),
        usage_compacted_tokens=Sum("usages__compacted_tokens"),
        usage_pruned_tokens=Sum("usages__pruned_tokens"),
    )


def tenant_usage_rows(
    *, tenant: Tenant, since: datetime | None, until: datetime | None
) -> QuerySet[RenderUsage]:
    """Every reported render of the tenant in ``[since, until)``, oldest first (the CSV export)."""
    rows = RenderUsage.objects.filter(tenant=tenant)
    if since is not None:
        rows = rows.filter(rendered_at__gte=since)
    if until is not None:
        rows = rows.filter(rendered_at__lt=until)
    return rows.select_related("conversation", "timeline").order_by("rendered_at", "id")
