"""The beat sweep (docs/background.md): find the timelines past the soft threshold, in one query,
and enqueue the compact task for each."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef, Subquery

from compaction.planner import worth_retrying
from timeline_app import selectors
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction.background import background_settings, compaction_enqueue, summarizes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TimelineLoad:
    timeline_id: int
    visible_tokens: int
    soft_limit: int


def timelines_past_soft_threshold(
    *, now: datetime, active_within: timedelta, soft_threshold: float
) -> Iterator[TimelineLoad]:
    """Timelines of conversations active within ``active_within`` whose visible tokens exceed
    ``min(soft_threshold, threshold) × max_tokens`` (their conversation's settings).

    One query: the visible tokens are summed in the database per timeline (the window from the
    latest summary's first retained block, plus that summary), never by loading blocks. Left out:
    timelines with a compaction running, those whose last compaction failed with no activity
    since, those whose latest decided compaction was rejected until they grew by
    ``REJECTED_RETRY_GROWTH × max_tokens`` over its ``before_tokens`` (``worth_retrying``: it would
    only be rejected again), and named contexts whose strategy is not ``summarize``.
    """
    compactions = Compaction.objects.filter(timeline=OuterRef("pk"))
    unchanged_since_failure = compactions.filter(
        status=Compaction.Status.FAILED, started_at__gte=OuterRef("conversation__last_activity_at")
    )
    decided = compactions.filter(status__in=[Compaction.Status.APPLIED, Compaction.Status.REJECTED]).order_by(
        "-id"
    )
    rows = (
        Timeline.objects.with_window()
        .filter(conversation__last_activity_at__gte=now - active_within)
        .exclude(Exists(compactions.filter(status=Compaction.Status.RUNNING)))
        .exclude(Exists(unchanged_since_failure))
        .annotate(
            last_status=Subquery(decided.values("status")[:1]),
            last_before=Subquery(decided.values("before_tokens")[:1]),
        )
        .order_by("pk")
        .values_list(
            "pk",
            "visible_tokens",
            "conversation_id",
            "conversation__settings",
            "compaction_strategy",
            "last_status",
            "last_before",
        )
    )
    for pk, visible, conversation_id, overrides, strategy, last_status, last_before in rows.iterator(
        chunk_size=500
    ):
        if strategy and not summarizes(Timeline(pk=pk, compaction_strategy=strategy)):
            continue
        settings = selectors.settings_resolve(conversation_id=conversation_id, overrides=overrides).settings
        limit = background_settings(settings, soft_threshold=soft_threshold).compaction_limit
        if last_status == Compaction.Status.REJECTED and not worth_retrying(
            visible_tokens=int(visible), rejected_before_tokens=last_before, max_tokens=settings.max_tokens
        ):
            continue
        if visible > limit:
            yield TimelineLoad(timeline_id=pk, visible_tokens=int(visible), soft_limit=limit)


def compaction_sweep(
    *, now: datetime, active_within: timedelta, soft_threshold: float, expires: float | None = None
) -> list[int]:
    """Enqueue a background compaction for every timeline past the soft threshold (the beat job).

    ``expires`` drops a queued task that no worker started in time (the next sweep enqueues again).
    """
    due = [
        load.timeline_id
        for load in timelines_past_soft_threshold(
            now=now, active_within=active_within, soft_threshold=soft_threshold
        )
    ]
    for timeline_id in due:
        compaction_enqueue(timeline_id=timeline_id, trigger=Compaction.Trigger.BACKGROUND, expires=expires)
    if due:
        logger.info("compaction sweep: %d timeline(s) past the soft threshold enqueued", len(due))
    return due
