"""Reads of named contexts (seed 004): stored messages, views with the context's compaction
strategy applied, the merged full context, and the configured custom strategies."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, F
from django.utils.module_loading import import_string

from compaction import strategies
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.messages import (
    CLIENT_ID_PREFIX,
    MESSAGE_BLOCK_TYPES,
    StoredMessage,
    stored_message,
)
from timeline_app.models import Block, Conversation, Timeline

logger = logging.getLogger(__name__)


def stored_messages(*, timeline: Timeline, from_seq: int | None = None) -> list[StoredMessage]:
    """The messages stored from ``from_seq`` on (default: since the last clear), in order; popped
    ones left out."""
    start = timeline.view_start_seq if from_seq is None else from_seq
    rows = (
        Block.objects.filter(timeline=timeline, seq__gte=start, type__in=MESSAGE_BLOCK_TYPES)
        .not_popped()
        .order_by("seq")
        .values_list("seq", "meta")
    )
    return [m for seq, meta in rows if (m := stored_message(seq, meta)) is not None]


def custom_strategies() -> dict[str, str]:
    """``settings.TIMELINE_CUSTOM_STRATEGIES``: strategy name → dotted path of its function."""
    configured = settings.TIMELINE_CUSTOM_STRATEGIES
    return {
        name: path
        for name, path in dict(configured).items()
        if isinstance(name, str)
        and isinstance(path, str)
        and strategies.NAME_PATTERN.match(name)
        and name not in strategies.BUILTIN_STRATEGIES
    }


def effective_strategy(*, timeline: Timeline) -> dict[str, Any]:
    """The context's strategy; ``summarize`` when none is set or the stored one no longer exists."""
    try:
        return strategies.normalize_strategy(timeline.compaction_strategy, custom_names=custom_strategies())
    except strategies.StrategyError:
        logger.warning(
            "context %s: stored compaction strategy %r is not valid (any more); using summarize",
            timeline.pk,
            timeline.compaction_strategy,
        )
        return {"name": strategies.SUMMARIZE}


def _kept_indices(timeline: Timeline, messages: list[dict[str, Any]]) -> list[int]:
    strategy = effective_strategy(timeline=timeline)
    name = strategy["name"]
    custom: dict[str, strategies.CustomStrategy] = {}
    try:
        if name not in strategies.BUILTIN_STRATEGIES:
            custom[name] = import_string(custom_strategies()[name])
        return strategies.apply_strategy(messages, strategy, custom=custom)
    except Exception:
        # A broken custom strategy must never lose messages: the view falls back to all of them.
        logger.exception(
            "context %s: compaction strategy %r failed; showing every message", timeline.pk, name
        )
        return list(range(len(messages)))


def _view_of(timeline: Timeline, messages: list[StoredMessage]) -> list[StoredMessage]:
    """The stored messages since the last clear with the context's compaction strategy applied."""
    if effective_strategy(timeline=timeline)["name"] == strategies.SUMMARIZE:
        return messages
    kept = _kept_indices(timeline, [m.as_dict() for m in messages])
    return [messages[i] for i in kept]


def context_view(*, timeline: Timeline) -> list[StoredMessage]:
    """The context's view: messages since the last clear, with its compaction strategy applied."""
    return _view_of(timeline, stored_messages(timeline=timeline))


def _stored_messages_of(timelines: Sequence[Timeline]) -> dict[int, list[StoredMessage]]:
    """The messages since the last clear of each of these contexts (popped ones left out), in
    order: one query for all."""
    by_timeline: dict[int, list[StoredMessage]] = {t.pk: [] for t in timelines}
    if not timelines:
        return by_timeline
    rows = (
        Block.objects.filter(
            timeline_id__in=list(by_timeline),
            type__in=MESSAGE_BLOCK_TYPES,
            seq__gte=F("timeline__view_start_seq"),
        )
        .not_popped()
        .order_by("timeline_id", "seq")
        .values_list("timeline_id", "seq", "meta")
    )
    for timeline_id, seq, meta in rows.iterator(chunk_size=2000):
        if (message := stored_message(seq, meta)) is not None:
            by_timeline[timeline_id].append(message)
    return by_timeline


def strategy_window(*, timeline: Timeline, window: Sequence[BlockValue]) -> list[BlockValue]:
    """The visible window (``selectors.visible_window``) with the context's strategy applied:
    message blocks outside the strategy's view are left out, every other block stays.

    The hook for the render pipeline, so that a render shows what ``GET …/messages/`` lists.
    """
    if effective_strategy(timeline=timeline)["name"] == strategies.SUMMARIZE:
        return list(window)
    positions = [
        i
        for i, block in enumerate(window)
        if block.type in MESSAGE_BLOCK_TYPES and stored_message(block.seq, block.meta) is not None
    ]
    messages = [stored_message(window[i].seq, window[i].meta) for i in positions]
    kept = _kept_indices(timeline, [m.as_dict() for m in messages if m is not None])
    dropped = set(positions) - {positions[k] for k in kept}
    return [block for i, block in enumerate(window) if i not in dropped]


def full_context(*, conversation: Conversation, labels: Sequence[str] = ()) -> list[StoredMessage]:
    """The views of every context whose name equals a label or starts with ``label_`` (all
    contexts without labels), deduplicated by ``message_id``, ordered by timestamp, then by
    context creation, then by storage order."""
    timelines = Timeline.objects.filter(conversation=conversation).order_by("created_at", "id")
    chosen = [
        t
        for t in timelines
        if not labels or any(t.name == lb or t.name.startswith(f"{lb}_") for lb in labels)
    ]
    stored = _stored_messages_of(chosen)
    entries: list[tuple[str, int, int, StoredMessage]] = []
    for rank, timeline in enumerate(chosen):
        entries.extend((m.timestamp, rank, m.seq, m) for m in _view_of(timeline, stored[timeline.pk]))
    entries.sort(key=lambda e: e[:3])
    seen: set[str] = set()
    merged: list[StoredMessage] = []
    for *_, message in entries:
        if message.message_id not in seen:
            seen.add(message.message_id)
            merged.append(message)
    return merged


@dataclass(frozen=True)
class ContextInfo:
    name: str
    created_at: datetime
    compaction_strategy: dict[str, Any]
    message_count: int
    stored_message_count: int


def _stored_counts(timelines: Sequence[Timeline]) -> dict[int, int]:
    """Messages stored in each context, cleared and popped ones included: one query for all."""
    rows = (
        Block.objects.filter(
            timeline_id__in=[t.pk for t in timelines],
            type__in=MESSAGE_BLOCK_TYPES,
            client_id__startswith=CLIENT_ID_PREFIX,
        )
        .order_by()
        .values("timeline_id")
        .annotate(n=Count("id"))
        .values_list("timeline_id", "n")
    )
    return dict(rows)


def _infos(timelines: Sequence[Timeline]) -> list[ContextInfo]:
    stored = _stored_messages_of(timelines)
    counts = _stored_counts(timelines) if timelines else {}
    return [
        ContextInfo(
            name=t.name,
            created_at=t.created_at,
            compaction_strategy=effective_strategy(timeline=t),
            message_count=len(_view_of(t, stored[t.pk])),
            stored_message_count=counts.get(t.pk, 0),
        )
        for t in timelines
    ]


def context_info(*, timeline: Timeline) -> ContextInfo:
    return _infos([timeline])[0]


def context_infos(*, conversation: Conversation) -> list[ContextInfo]:
    """Every context of the conversation with its counts: three queries, however many contexts."""
    return _infos(list(Timeline.objects.filter(conversation=conversation).order_by("created_at", "id")))
