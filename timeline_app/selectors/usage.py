"""Reads for the cost model: the provider cache the forecast starts from, reported usage, totals."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet, Sum

from timeline_app.domain.times import parse_iso
from timeline_app.models import Conversation, RenderRecord, RenderUsage, Tenant, Timeline
from timeline_app.rendering.prefix import PreviousRender, stored_checkpoints
from timeline_app.rendering.usage.forecast import ONE_HOUR, TWELVE_HOURS, CacheState, Provider
from timeline_app.selectors.renders import PREVIOUS_RENDER_COLUMNS, previous_render, previous_render_of

# The recent renders the forecast reads: Anthropic entries live at most an hour past their last
# touch, and every render re-touches what it reads, so the newest few dozen hold every live entry;
# OpenAI compares with the last few prompts (the newest shares the longest prefix but after an edit).
ANTHROPIC_RECENT = 32
OPENAI_RECENT = 4


def _by_entries(provider: Provider, explicit: bool) -> bool:
    """Whether the forecast's cache is a set of written entries (Anthropic's markers, OpenAI's
    explicit breakpoints on GPT-5.6) rather than the last prompts (OpenAI's and Gemini's implicit
    prefix caching)."""
    return provider == "anthropic" or explicit


def _recent_span(provider: Provider, retention_seconds: int, explicit: bool) -> tuple[int, int]:
    """How far back (seconds) and how many of the newest renders the forecast reads."""
    if _by_entries(provider, explicit):
        return (ONE_HOUR if provider == "anthropic" else TWELVE_HOURS), ANTHROPIC_RECENT
    return retention_seconds, OPENAI_RECENT


def _state_of(provider: Provider, rows: list[tuple[Any, ...]], explicit: bool) -> CacheState:
    """The cache state from the recent renders' ``(rendered_at, cache_touched, cache_head,
    segment_digests, segment_stride, segment_count)``, newest first."""
    if _by_entries(provider, explicit):
        entries: dict[bytes, datetime] = {}
        for _, touched, *_rest in rows:
            for digest_hex, expires in touched or ():
                digest, at = bytes.fromhex(digest_hex), parse_iso(expires)
                entries[digest] = max(at, entries.get(digest, at))
        return CacheState(entries=entries)
    prompts = []
    for at, _, head, packed, stride, count in rows:
        # The record's bounded fingerprint: every segment up to 1,024, then one checkpoint per
        # chunk (``prefix.Fingerprint``); the request's block 0 is the head when it has one.
        checkpoints = stored_checkpoints(bytes(packed), stride=stride, count=count)
        if head:
            checkpoints = [(0, bytes.fromhex(head)), *((i + 1, digest) for i, digest in checkpoints)]
        prompts.append((at, checkpoints))
    return CacheState(prompts=prompts)


def cache_state(
    *, timeline: Timeline, provider: Provider, now: datetime, retention_seconds: int, explicit: bool = False
) -> CacheState:
    """The provider cache of this context as the forecast believes it before a render at ``now``
    (one query). ``explicit``: OpenAI's breakpoint entries (GPT-5.6), read like Anthropic's."""
    span, limit = _recent_span(provider, retention_seconds, explicit)
    recent = (
        RenderRecord.objects.filter(
            timeline=timeline, rendered_at__gte=now - timedelta(seconds=span), rendered_at__lte=now
        )
        .order_by("-id")
        .values_list(
            "rendered_at", "cache_touched", "cache_head", "segment_digests", "segment_stride", "segment_count"
        )
    )
    return _state_of(provider, list(recent[:limit]), explicit)


# The newest record of the context (the previous render, whatever its age) and the records of the
# span, newest first; the previous render's columns for the newest row alone (its fingerprint is
# up to 32 KiB). A constant statement: building it with the ORM (ten CASE expressions over a
# subquery) cost more Python than the second query it saves.
_MEMORY_SQL = """
SELECT r.rendered_at, (r.rendered_at >= %(since)s AND r.rendered_at <= %(now)s), {touched}, {head},
    {digests}, r.segment_stride, r.segment_count, {previous}
FROM {records} r, (SELECT max(id) AS id FROM {records} WHERE timeline_id = %(timeline)s) newest
WHERE r.timeline_id = %(timeline)s
    AND ((r.rendered_at >= %(since)s AND r.rendered_at <= %(now)s) OR r.id = newest.id)
ORDER BY r.id DESC
LIMIT %(limit)s
"""


def _memory_sql(provider: Provider, explicit: bool) -> str:
    anthropic = _by_entries(provider, explicit)
    return _MEMORY_SQL.format(
        records=RenderRecord._meta.db_table,
        touched="r.cache_touched" if anthropic else "NULL",
        head="''" if anthropic else "r.cache_head",
        digests="NULL" if anthropic else "r.segment_digests",
        previous=", ".join(
            f"CASE WHEN r.id = newest.id THEN r.{name} END" for name in PREVIOUS_RENDER_COLUMNS
        ),
    )


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def render_memory(
    *, timeline: Timeline, provider: Provider, now: datetime, retention_seconds: int, explicit: bool = False
) -> tuple[PreviousRender | None, CacheState]:
    """What a render reads of its context's history, in one query (issue 38: two before): the
    latest render as the cache explainer compares it (``previous_render``), and the provider cache
    the usage forecast starts from (``cache_state``: the newest renders of the last hour, or of
    the OpenAI retention)."""
    if connection.vendor != "postgresql":  # two queries
        return previous_render(timeline=timeline), cache_state(
            timeline=timeline,
            provider=provider,
            now=now,
            retention_seconds=retention_seconds,
            explicit=explicit,
        )
    span, limit = _recent_span(provider, retention_seconds, explicit)
    params: dict[str, Any] = {
        "timeline": timeline.pk,
        "since": now - timedelta(seconds=span),
        "now": now,
        "limit": limit + 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(_memory_sql(provider, explicit), params)
        fetched = cursor.fetchall()
    # (rendered_at, touched, head, digests, stride, count) of the renders in the span, newest first
    recent = [(row[0], _json(row[2]), *row[3:7]) for row in fetched if row[1]][:limit]
    state = _state_of(provider, recent, explicit)
    if not fetched:
        return None, state
    return previous_render_of((fetched[0][0], *fetched[0][7:])), state


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
