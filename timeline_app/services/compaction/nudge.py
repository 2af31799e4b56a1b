"""A render that finds its window past the soft threshold queues a background compaction at once
(``compaction_nudge``), without waiting for the next sweep."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from celery import current_app
from django.conf import settings as django_settings
from django.core.cache import cache

from compaction.planner import needs_compaction, visible_tokens, worth_retrying
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.blocks import window_summary_seq
from timeline_app.domain.settings import RenderSettings
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction.background import COMPACT_TASK, background_settings, summarizes

logger = logging.getLogger(__name__)

NUDGE_SECONDS = 30
"""At most one render-queued compaction per timeline in this many seconds (and its queue expiry)."""
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _latest_rejected_before(timeline: Timeline) -> int | None:
    """The ``before_tokens`` of the timeline's latest decided compaction when it was rejected."""
    latest = (
        Compaction.objects.filter(
            timeline=timeline, status__in=[Compaction.Status.APPLIED, Compaction.Status.REJECTED]
        )
        .order_by("-id")
        .values_list("status", "before_tokens")
        .first()
    )
    return latest[1] if latest is not None and latest[0] == Compaction.Status.REJECTED else None


def nudge_budget_take(*, tenant_id: int, now: float) -> bool:
    """Count one nudge against the tenant's budget (``TIMELINE_NUDGE_THROTTLE``, the compact
    endpoint's rate by default): per tenant, so more API keys buy no more background compactions,
    in fixed windows counted with one atomic ``incr`` in the shared cache, like the compact
    throttle. Returns whether the nudge is within the budget."""
    count_text, period = django_settings.TIMELINE_NUDGE_THROTTLE.split("/", 1)
    allowed, duration = int(count_text), _PERIODS[period[0]]
    key = f"throttle:nudge:tenant:{tenant_id}:{int(now // duration)}"
    cache.add(key, 0, timeout=duration + 5)
    try:
        count = cache.incr(key)
    except ValueError:  # the counter expired between add() and incr()
        cache.add(key, 1, timeout=duration + 5)
        count = 1
    return bool(count <= allowed)


def compaction_nudge(*, timeline: Timeline, window: Sequence[BlockValue], settings: RenderSettings) -> bool:
    """Queue a background compaction now when a render finds its window past the soft threshold.

    The beat sweep finds such timelines only every ``TIMELINE_SWEEP_INTERVAL_SECONDS``; an agent
    that appends fast can go from the soft to the hard threshold in between and then wait for a
    summary inside its render (the load bench saw 6 of 16,000 with a 5 s sweep). At most one per
    timeline and latest summary per ``NUDGE_SECONDS``, decided by an atomic cache add shared by
    every process; not for a timeline whose latest compaction was rejected until it grew enough
    (``worth_retrying``, as the sweep); and at most ``TIMELINE_NUDGE_THROTTLE`` per tenant
    (``nudge_budget_take``). Not with eager tasks (the embedded mode: the compaction would run
    inside the render), and a broker that cannot take the task or a cache that cannot be reached
    costs the render nothing but a log line: the sweep and the hard threshold remain. Returns
    whether a task was queued.
    """
    if django_settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    soft = background_settings(settings, soft_threshold=django_settings.TIMELINE_SOFT_THRESHOLD)
    if not needs_compaction(window, system_tokens=0, settings=soft) or not summarizes(timeline):
        return False
    # Once per compaction state: a summary applied since makes a new key, so a timeline that fills
    # up again soon after a compaction is nudged again at once.
    summary_seq = window_summary_seq(window) or 0
    try:
        first = cache.add(f"compaction-nudge:{timeline.pk}:{summary_seq}", 1, timeout=NUDGE_SECONDS)
    except Exception:  # the shared cache (Redis) is down: no nudge, the render goes on
        logger.warning(
            "compaction nudge for timeline %s skipped: cache unreachable", timeline.pk, exc_info=True
        )
        return False
    if not first:
        return False
    rejected_before = _latest_rejected_before(timeline)
    if rejected_before is not None and not worth_retrying(
        visible_tokens=visible_tokens(window),
        rejected_before_tokens=rejected_before,
        max_tokens=settings.max_tokens,
    ):
        return False
    try:
        within_budget = nudge_budget_take(tenant_id=timeline.conversation.tenant_id, now=time.time())
    except Exception:  # the shared cache went away since the add above: no nudge, the render goes on
        logger.warning(
            "compaction nudge for timeline %s skipped: cache unreachable", timeline.pk, exc_info=True
        )
        return False
    if not within_budget:
        logger.info("compaction nudge for timeline %s over its tenant's budget", timeline.pk)
        return False
    task = current_app.tasks[COMPACT_TASK]
    try:
        task.apply_async(
            args=(timeline.pk, Compaction.Trigger.BACKGROUND, False), expires=NUDGE_SECONDS, retry=False
        )
    except Exception:  # the broker is down: the render goes on, the sweep will find the timeline
        logger.warning("compaction nudge for timeline %s not queued", timeline.pk, exc_info=True)
        return False
    return True
