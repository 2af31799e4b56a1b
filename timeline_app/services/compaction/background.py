"""Background compaction (DESIGN §6, docs/background.md): the beat sweep finds timelines past the
soft threshold and enqueues the compact task; the task's work plans against that soft threshold.

Services never import the task module (tasks call services): the task is addressed by its
registered name in Celery's registry, which keeps eager mode working (``send_task`` would not).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db.models import Exists, OuterRef, Subquery

from compaction.planner import needs_compaction, visible_tokens, worth_retrying
from compaction.strategies import SUMMARIZE
from timeline_app import selectors
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.blocks import window_summary_seq
from timeline_app.domain.settings import RenderSettings
from timeline_app.models import Compaction, Timeline
from timeline_app.selectors.contexts import effective_strategy
from timeline_app.services.compaction.apply import CompactionOutcome
from timeline_app.services.compaction.run import compaction_run

logger = logging.getLogger(__name__)


def background_settings(settings: RenderSettings, *, soft_threshold: float) -> RenderSettings:
    """A background compaction plans against the soft threshold (never above the hard one), so it
    runs before a render would have to compact and leaves the context well under it."""
    return replace(settings, threshold=min(soft_threshold, settings.threshold))


def timeline_compact(
    *,
    timeline_id: int,
    trigger: str,
    force: bool = False,
    task_id: str = "",
    compaction_id: int | None = None,
) -> CompactionOutcome:
    """The compact task's work: a background run plans against the soft threshold, a manual one
    against the conversation's own threshold (like ``POST …/compact/`` with ``wait``)."""
    if trigger not in Compaction.Trigger.values:
        raise ValueError(f"unknown compaction trigger {trigger!r}")
    timeline = Timeline.objects.select_related("conversation").filter(pk=timeline_id).first()
    if timeline is None:
        return CompactionOutcome(status=Compaction.Outcome.SKIPPED, error="timeline gone")
    settings = selectors.timeline_settings(timeline=timeline)
    if trigger == Compaction.Trigger.BACKGROUND:
        if not _summarizes(timeline):
            return CompactionOutcome(
                status=Compaction.Outcome.SKIPPED, error="the context's strategy does not summarize"
            )
        settings = background_settings(settings, soft_threshold=django_settings.TIMELINE_SOFT_THRESHOLD)
    return compaction_run(
        timeline=timeline,
        settings=settings,
        trigger=trigger,
        force=force,
        task_id=task_id,
        record_id=compaction_id,
    )


def _summarizes(timeline: Timeline) -> bool:
    """Whether the context uses the seeds' summary compaction (named contexts may truncate or
    slide a window instead: background summaries would be wasted on them)."""
    return bool(effective_strategy(timeline=timeline)["name"] == SUMMARIZE)


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
        if strategy and not _summarizes(Timeline(pk=pk, compaction_strategy=strategy)):
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


COMPACT_TASK = "compaction.tasks.compact_timeline"
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
    if not needs_compaction(window, system_tokens=0, settings=soft) or not _summarizes(timeline):
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


def compaction_enqueue(
    *,
    timeline_id: int,
    trigger: str,
    force: bool = False,
    expires: float | None = None,
    compaction_id: int | None = None,
    task_id: str | None = None,
) -> str:
    """Queue a compaction of one timeline (``compaction_id``: the queued row it finishes); returns
    the Celery task id."""
    task = current_app.tasks[COMPACT_TASK]
    args = (
        (timeline_id, trigger, force)
        if compaction_id is None
        else (timeline_id, trigger, force, compaction_id)
    )
    result = task.apply_async(args=args, expires=expires, task_id=task_id)
    return str(result.id)
