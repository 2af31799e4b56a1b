"""Compaction in the shell (DESIGN §6): plan on a snapshot, summarize outside any transaction,
apply in a short transaction that checks nothing it planned against has changed
(``compaction_apply``).

A timeline has at most one compaction in flight: its claim (``compaction_claims``).

A conversation erased while its compaction runs (its rows gone: ``ConversationErased``) ends the
run quietly as ``skipped`` with one INFO line: nothing is left to compact or to clean up.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from django.utils import timezone

from compaction.planner import visible_tokens
from compaction.summarizers import Summarizer
from timeline_app import metrics, selectors, signals
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction_apply import (
    SUPERSEDED,
    CompactionOutcome,
    _apply,
    _latest_compaction_id,
    _Snapshot,
    _snapshot,
)
from timeline_app.services.compaction_claims import (
    ERASED,
    _claim,
    _claim_requested,
    _release,
    _settle_request,
    _wait_for_running,
)
from timeline_app.services.summarizers import configured_summarizer, draft_summary
from timeline_app.services.usage import summary_cache_prefix

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
    snap = _snapshot(timeline_id=timeline.pk, settings=settings, system_tokens=system_tokens, force=force)
    # A manual attempt (``compact`` with ``wait``) is a row whatever it finds: every attempt is listed.
    recorded = record_id is not None or trigger == Compaction.Trigger.MANUAL
    before = system_tokens + visible_tokens(snap.window)
    if snap.plan is None:
        reason = nothing_to_do(before_tokens=before, settings=settings)
        if recorded:
            record_id = _settle_request(
                record_id,
                timeline=snap.timeline,
                trigger=trigger,
                error=reason,
                before_tokens=before,
                threshold_tokens=settings.compaction_limit,
            )
        return CompactionOutcome(
            status=Compaction.Outcome.SKIPPED, compaction_id=record_id, before_tokens=before, error=reason
        )
    if record_id is not None:
        record = _claim_requested(timeline=snap.timeline, record_id=record_id, task_id=task_id)
        if record is None:
            _settle_request(
                record_id,
                timeline=snap.timeline,
                trigger=trigger,
                error=BUSY,
                before_tokens=before,
                threshold_tokens=settings.compaction_limit,
            )
            return CompactionOutcome(status=Compaction.Outcome.BUSY, compaction_id=record_id, error=BUSY)
    else:
        record = _claim(timeline=snap.timeline, trigger=trigger, task_id=task_id)
    if record is None:
        if trigger not in _RENDER_TRIGGERS or not _over_ceiling(snap.window, system_tokens, settings):
            busy_id = None
            if recorded:
                busy_id = _settle_request(
                    None,
                    timeline=snap.timeline,
                    trigger=trigger,
                    error=BUSY,
                    before_tokens=before,
                    threshold_tokens=settings.compaction_limit,
                )
            return CompactionOutcome(status=Compaction.Outcome.BUSY, compaction_id=busy_id, error=BUSY)
        _wait_for_running(timeline=snap.timeline, seconds=RENDER_WAIT_SECONDS)
        snap = _snapshot(timeline_id=timeline.pk, settings=settings, system_tokens=system_tokens, force=force)
        if snap.plan is None:
            return CompactionOutcome(status=Compaction.Outcome.SKIPPED)
        record = _claim(timeline=snap.timeline, trigger=trigger, task_id=task_id)
        if record is None:
            logger.warning(
                "compaction of timeline %s still running after %.0f s; the render compacts by itself",
                timeline.pk,
                RENDER_WAIT_SECONDS,
            )
    started = time.monotonic()
    try:
        if record is not None and _latest_compaction_id(snap.timeline) != snap.latest_compaction_id:
            # Another run applied between our plan and our claim: plan again rather than pay for
            # a summary the apply check would throw away.
            snap = _snapshot(
                timeline_id=timeline.pk, settings=settings, system_tokens=system_tokens, force=force
            )
            if snap.plan is None:
                _release(record, started=started, status=Compaction.Status.SKIPPED, error=SUPERSEDED)
                return CompactionOutcome(
                    status=Compaction.Outcome.SKIPPED, compaction_id=record.pk, error=SUPERSEDED
                )
        return _summarize_and_apply(
            snap=snap,
            record=record,
            trigger=trigger,
            settings=settings,
            summarizer=summarizer or configured_summarizer(model=settings.summary_model),
            started=started,
            now=now or timezone.now(),
        )
    except ConversationErased:
        raise
    except Exception as exc:
        logger.exception("compaction of timeline %s failed", timeline.pk)
        if record is not None:
            _release(
                record,
                started=started,
                status=Compaction.Status.FAILED,
                error=f"{type(exc).__name__}: {exc}"[:2000],
            )
        raise


def _summarize_and_apply(
    *,
    snap: _Snapshot,
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
    outcome = _apply(
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
