"""Run a compaction (DESIGN §6): plan on a snapshot, summarize outside any transaction, apply in a
short transaction that checks nothing it planned against has changed (``apply``).

A timeline has at most one compaction in flight: its claim (``claims``). ``timeline_compact`` is
the compact task's work (the sweep's, a nudge's or a ``POST …/compact/`` request's).

A conversation erased while its compaction runs (its rows gone: ``ConversationErased``) ends the
run quietly as ``skipped`` with one INFO line: nothing is left to compact or to clean up.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings as django_settings
from django.utils import timezone

from compaction.planner import visible_tokens
from compaction.summary import Summarizer
from timeline_app import metrics, selectors, signals
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction.apply import (
    SUPERSEDED,
    CompactionOutcome,
    Snapshot,
    latest_compaction_id,
    snapshot,
    summary_apply,
)
from timeline_app.services.compaction.background import background_settings, summarizes
from timeline_app.services.compaction.claims import (
    ERASED,
    claim,
    claim_requested,
    release,
    settle_request,
    wait_for_running,
)
from timeline_app.services.compaction.summary import (
    configured_summarizer,
    draft_summary,
    summary_cache_prefix,
)

logger = logging.getLogger(__name__)

# A render over max_tokens that finds another compaction running waits this long for it, then
# compacts by itself (without the claim: the apply check keeps the two from both applying).
RENDER_WAIT_SECONDS = 30.0
_RENDER_TRIGGERS = frozenset({Compaction.Trigger.RENDER, Compaction.Trigger.FORCED})

NOTHING_TO_DO = "nothing to compact: the context is under its threshold (or has no finished turn)"


def nothing_to_do(*, before_tokens: int, settings: RenderSettings) -> str:
    """Why a plan found nothing, with the numbers that decided it."""
    return (
        f"{NOTHING_TO_DO}: {before_tokens:,} tokens, threshold {settings.compaction_limit:,} "
        f"of max_tokens {settings.max_tokens:,}"
    )


BUSY = "busy: another compaction of this context was running"


def _over_ceiling(window: list[BlockValue], system_tokens: int, settings: RenderSettings) -> bool:
    return system_tokens + visible_tokens(window) > settings.max_tokens


def compaction_run(
    *,
    timeline: Timeline,
    settings: RenderSettings,
    trigger: str,
    force: bool = False,
    system_tokens: int = 0,
    summarizer: Summarizer | None = None,
    task_id: str = "",
    record_id: int | None = None,
    now: datetime | None = None,
) -> CompactionOutcome:
    """Compact ``timeline`` if it needs it (or when forced). Safe to call concurrently.

    ``now`` (the time the summary's cache check assumes; default: the clock) is for simulations.

    ``record_id``: the ``queued`` row of a ``POST …/compact/`` request, which this run claims and
    finishes (``skipped`` with the reason when there is nothing to do or another run is busy).

    Another compaction in flight makes this a no-op (``busy``) — except for a render whose
    context is over ``max_tokens``: it waits for the running compaction (``RENDER_WAIT_SECONDS``
    at most) and compacts by itself if the context still needs it, so a render never has to
    return a context over the ceiling.
    """
    try:
        return _run(
            timeline=timeline,
            settings=settings,
            trigger=trigger,
            force=force,
            system_tokens=system_tokens,
            summarizer=summarizer,
            task_id=task_id,
            record_id=record_id,
            now=now,
        )
    except ConversationErased:
        # Not a failure: the tenant erased the conversation (or retention did); its claim went too.
        logger.info("compaction of timeline %s stopped: its conversation was erased", timeline.pk)
        return CompactionOutcome(status=Compaction.Outcome.SKIPPED, error=ERASED)


@dataclass(frozen=True)
class _Attempt:
    """What one run was asked to do: fixed for the run, whatever it finds."""

    timeline_id: int
    settings: RenderSettings
    trigger: str
    force: bool
    system_tokens: int
    task_id: str

    def plan(self) -> Snapshot:
        return snapshot(
            timeline_id=self.timeline_id,
            settings=self.settings,
            system_tokens=self.system_tokens,
            force=self.force,
        )


@dataclass(frozen=True)
class _Claimed:
    """A plan and the claim to carry it out (``record`` None: a render over ``max_tokens``
    compacting by itself after waiting for the running compaction)."""

    snap: Snapshot
    record: Compaction | None


def _run(
    *,
    timeline: Timeline,
    settings: RenderSettings,
    trigger: str,
    force: bool,
    system_tokens: int,
    summarizer: Summarizer | None,
    task_id: str,
    record_id: int | None,
    now: datetime | None,
) -> CompactionOutcome:
    attempt = _Attempt(timeline.pk, settings, trigger, force, system_tokens, task_id)
    snap = attempt.plan()
    # A manual attempt (``compact`` with ``wait``) is a row whatever it finds: every attempt is listed.
    recorded = record_id is not None or trigger == Compaction.Trigger.MANUAL
    before = system_tokens + visible_tokens(snap.window)
    if snap.plan is None:
        reason = nothing_to_do(before_tokens=before, settings=settings)
        if recorded:
            record_id = _settled(attempt, snap, record_id, error=reason, before=before)
        return CompactionOutcome(
            status=Compaction.Outcome.SKIPPED, compaction_id=record_id, before_tokens=before, error=reason
        )
    claimed = _claim_or_busy(attempt, snap, record_id=record_id, recorded=recorded, before=before)
    if isinstance(claimed, CompactionOutcome):
        return claimed
    return _summarize_claimed(attempt, claimed, summarizer=summarizer, now=now)


def _settled(attempt: _Attempt, snap: Snapshot, record_id: int | None, *, error: str, before: int) -> int:
    """The attempt's row finished as ``skipped`` (or ``busy``) with the numbers that decided it."""
    return settle_request(
        record_id,
        timeline=snap.timeline,
        trigger=attempt.trigger,
        error=error,
        before_tokens=before,
        threshold_tokens=attempt.settings.compaction_limit,
    )


def _claim_or_busy(
    attempt: _Attempt, snap: Snapshot, *, record_id: int | None, recorded: bool, before: int
) -> _Claimed | CompactionOutcome:
    """Take the timeline's claim (the requested row's, when there is one), or answer ``busy``; a
    render over ``max_tokens`` waits for the running compaction instead (``_after_the_running_one``)."""
    trigger, task_id = attempt.trigger, attempt.task_id
    if record_id is not None:
        record = claim_requested(timeline=snap.timeline, record_id=record_id, task_id=task_id)
        if record is None:
            _settled(attempt, snap, record_id, error=BUSY, before=before)
            return CompactionOutcome(status=Compaction.Outcome.BUSY, compaction_id=record_id, error=BUSY)
    else:
        record = claim(timeline=snap.timeline, trigger=trigger, task_id=task_id)
    if record is None:
        if trigger not in _RENDER_TRIGGERS or not _over_ceiling(
            snap.window, attempt.system_tokens, attempt.settings
        ):
            busy_id = None
            if recorded:
                busy_id = _settled(attempt, snap, None, error=BUSY, before=before)
            return CompactionOutcome(status=Compaction.Outcome.BUSY, compaction_id=busy_id, error=BUSY)
        return _after_the_running_one(attempt, snap)
    return _Claimed(snap=snap, record=record)


def _after_the_running_one(attempt: _Attempt, snap: Snapshot) -> _Claimed | CompactionOutcome:
    """A render over ``max_tokens``: wait for the running compaction, plan again, and compact by
    itself (without the claim) if the context still needs it."""
    wait_for_running(timeline=snap.timeline, seconds=RENDER_WAIT_SECONDS)
    snap = attempt.plan()
    if snap.plan is None:
        return CompactionOutcome(status=Compaction.Outcome.SKIPPED)
    record = claim(timeline=snap.timeline, trigger=attempt.trigger, task_id=attempt.task_id)
    if record is None:
        logger.warning(
            "compaction of timeline %s still running after %.0f s; the render compacts by itself",
            attempt.timeline_id,
            RENDER_WAIT_SECONDS,
        )
    return _Claimed(snap=snap, record=record)


def _summarize_claimed(
    attempt: _Attempt, claimed: _Claimed, *, summarizer: Summarizer | None, now: datetime | None
) -> CompactionOutcome:
    """Summarize and apply under the claim; a failure releases it as ``failed`` and is raised."""
    snap, record, settings = claimed.snap, claimed.record, attempt.settings
    started = time.monotonic()
    try:
        if record is not None and latest_compaction_id(snap.timeline) != snap.latest_compaction_id:
            # Another run applied between our plan and our claim: plan again rather than pay for
            # a summary the apply check would throw away.
            snap = attempt.plan()
            if snap.plan is None:
                release(record, started=started, status=Compaction.Status.SKIPPED, error=SUPERSEDED)
                return CompactionOutcome(
                    status=Compaction.Outcome.SKIPPED, compaction_id=record.pk, error=SUPERSEDED
                )
        return _summarize_and_apply(
            snap=snap,
            record=record,
            trigger=attempt.trigger,
            settings=settings,
            summarizer=summarizer or configured_summarizer(model=settings.summary_model),
            started=started,
            now=now or timezone.now(),
        )
    except ConversationErased:
        raise
    except Exception as exc:
        logger.exception("compaction of timeline %s failed", attempt.timeline_id)
        if record is not None:
            release(
                record,
                started=started,
                status=Compaction.Status.FAILED,
                error=f"{type(exc).__name__}: {exc}"[:2000],
            )
        raise


def _summarize_and_apply(
    *,
    snap: Snapshot,
    record: Compaction | None,
    trigger: str,
    settings: RenderSettings,
    summarizer: Summarizer,
    started: float,
    now: datetime,
) -> CompactionOutcome:
    plan = snap.plan
    assert plan is not None
    timeline = snap.timeline
    started_at = record.started_at if record is not None else timezone.now()
    signals.on_before_compaction.send(
        sender=Compaction, timeline=timeline, trigger=trigger, payload={"before_tokens": plan.before_tokens}
    )
    # Outside any transaction: the LLM call may take seconds and retries.
    turn_id = selectors.timeline_current_turn_id(timeline=timeline) or (
        snap.window[-1].turn_id if snap.window else ""
    )
    if hasattr(summarizer, "cached_prefix"):  # an LLM summarizer that can read the context's cache
        summarizer.cached_prefix = summary_cache_prefix(
            timeline=timeline,
            window=snap.window,
            plan=plan,
            settings=settings,
            model=summarizer.model,
            now=now,
        )
    draft = draft_summary(plan=plan, settings=settings, summarizer=summarizer, turn_id=turn_id)
    metrics.observe_summary(
        configured=summarizer.name,
        written_by=draft.history.summarizer,
        seconds=draft.summarize_ms / 1000,
        fell_back=bool(draft.errors),
    )
    outcome = summary_apply(
        snap=snap,
        plan=plan,
        record=record,
        trigger=trigger,
        draft=draft,
        started=started,
        started_at=started_at,
    )
    if outcome.status == Compaction.Outcome.APPLIED:
        signals.on_after_compaction.send(
            sender=Compaction,
            timeline=timeline,
            trigger=trigger,
            payload={
                "before_tokens": outcome.before_tokens,
                "after_tokens": outcome.after_tokens,
                "compacted_tokens": outcome.compacted_tokens,
            },
        )
    return outcome


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
        if not summarizes(timeline):
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
