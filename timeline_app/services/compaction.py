"""Compaction in the shell (DESIGN §6): plan on a snapshot, summarize outside any transaction,
apply in a short transaction that checks nothing it planned against has changed.

A timeline has at most one compaction in flight: its claim (``compaction_claims``).

The apply transaction locks the conversation and timeline rows (``timeline_lock``), then the claim
row, and writes only when the claim
is still this run's, the latest applied compaction is the one the plan started from, and the
context's view was not cleared meanwhile. Blocks contributed during the summary are not read by
the plan and never rewritten: the summary goes in front of the first retained block, so they stay
visible after it, in order.

A conversation erased while its compaction runs (its rows gone: ``ConversationErased``) ends the
run quietly as ``skipped`` with one INFO line: nothing is left to compact or to clean up.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from compaction.planner import CompactionPlan, compaction_result, plan_compaction, visible_tokens
from compaction.summarizers import Summarizer
from timeline_app import metrics, selectors, signals
from timeline_app.domain.blocks import SEQ_LIMIT
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction_claims import (
    ERASED,
    TAKEN_OVER,
    _claim,
    _claim_requested,
    _release,
    _settle_request,
    _wait_for_running,
)
from timeline_app.services.conversations import timeline_lock
from timeline_app.services.summarizers import SummaryDraft, configured_summarizer, draft_summary
from timeline_app.services.usage import summary_cache_prefix, summary_usage_fields

logger = logging.getLogger(__name__)

# A render over max_tokens that finds another compaction running waits this long for it, then
# compacts by itself (without the claim: the apply check keeps the two from both applying).
RENDER_WAIT_SECONDS = 30.0
_RENDER_TRIGGERS = frozenset({Compaction.Trigger.RENDER, Compaction.Trigger.FORCED})

SUPERSEDED = "superseded: the timeline was compacted or cleared meanwhile"
FULL = "rejected: the context is full (no seq left for a summary block)"
NOTHING_TO_DO = "nothing to compact: the context is under its threshold (or has no finished turn)"
BUSY = "busy: another compaction of this context was running"


@dataclass(frozen=True)
class CompactionOutcome:
    """What one compaction attempt did; ``status`` is a ``Compaction.Outcome``."""

    status: str
    compaction_id: int | None = None
    summary_path: str = ""
    covered_turn_ids: tuple[str, ...] = ()
    split_turn_id: str | None = None
    before_tokens: int = 0
    after_tokens: int = 0
    compacted_tokens: int = 0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary_path": self.summary_path,
            "covered_turn_ids": list(self.covered_turn_ids),
            "split_turn_id": self.split_turn_id,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "compacted_tokens": self.compacted_tokens,
        }


@dataclass(frozen=True)
class _Snapshot:
    """What a plan was made against: checked again under lock before applying."""

    timeline: Timeline
    latest_compaction_id: int | None
    window: list[BlockValue]
    plan: CompactionPlan | None


def _snapshot(*, timeline_id: int, settings: RenderSettings, system_tokens: int, force: bool) -> _Snapshot:
    fresh = Timeline.objects.filter(pk=timeline_id).first()
    if fresh is None:
        raise ConversationErased(ERASED)
    # The latest compaction is read before the window: if one applies in between, the apply check
    # sees a newer one and skips (never the other way round).
    latest_id = _latest_compaction_id(fresh)
    window = selectors.visible_window(timeline=fresh)
    plan = plan_compaction(window, system_tokens=system_tokens, settings=settings, force=force)
    return _Snapshot(timeline=fresh, latest_compaction_id=latest_id, window=window, plan=plan)


def _latest_compaction_id(timeline: Timeline) -> int | None:
    return (
        Compaction.objects.filter(timeline=timeline, status=Compaction.Status.APPLIED)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )


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
    if snap.plan is None:
        _settle_request(record_id, status=Compaction.Status.SKIPPED, error=NOTHING_TO_DO)
        return CompactionOutcome(status=Compaction.Outcome.SKIPPED, compaction_id=record_id)
    if record_id is not None:
        record = _claim_requested(timeline=snap.timeline, record_id=record_id, task_id=task_id)
        if record is None:
            _settle_request(record_id, status=Compaction.Status.SKIPPED, error=BUSY)
            return CompactionOutcome(status=Compaction.Outcome.BUSY, compaction_id=record_id, error=BUSY)
    else:
        record = _claim(timeline=snap.timeline, trigger=trigger, task_id=task_id)
    if record is None:
        if trigger not in _RENDER_TRIGGERS or not _over_ceiling(snap.window, system_tokens, settings):
            return CompactionOutcome(status=Compaction.Outcome.BUSY)
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


def _record_fields(plan: CompactionPlan, draft: SummaryDraft) -> dict[str, Any]:
    """What a compaction row records of its plan and summary, whatever its final status."""
    return {
        "summarizer": draft.history.summarizer,
        "model": draft.history.model,
        **summary_usage_fields(
            model=draft.history.model, usage=draft.history.usage, cache=draft.history.cache
        ),
        "error": draft.errors,
        "summarize_ms": draft.summarize_ms,
        "before_tokens": plan.before_tokens,
        "compacted_tokens": plan.compacted_tokens,
        "covered_turn_ids": list(plan.covered_turn_ids),
        "split_turn_id": plan.split_turn_id or "",
        "first_retained_seq": plan.first_retained_seq,
        "covered_from_seq": plan.compacted[0].seq if plan.compacted else None,
        "covered_to_seq": plan.compacted[-1].seq if plan.compacted else None,
        "digest": draft.digest,
    }


def _apply(
    *,
    snap: _Snapshot,
    plan: CompactionPlan,
    record: Compaction | None,
    trigger: str,
    draft: SummaryDraft,
    started: float,
    started_at: datetime,
) -> CompactionOutcome:
    """The short apply transaction: store the summary only if the claim is still ours, nothing the
    plan read has changed, and it still reduces the visible tokens."""
    timeline, summary, errors = snap.timeline, draft.block, draft.errors
    with transaction.atomic(durable=True):
        locked = timeline_lock(timeline=timeline)
        if record is not None:
            claim = Compaction.objects.select_for_update().filter(pk=record.pk, timeline=locked).first()
            if claim is None or claim.status != Compaction.Status.RUNNING:
                # Taken over (our worker was presumed dead): the run that took it applies.
                return CompactionOutcome(
                    status=Compaction.Outcome.SKIPPED, compaction_id=record.pk, error=TAKEN_OVER
                )
            row = claim
        else:
            row = Compaction(timeline=locked, trigger=trigger, started_at=started_at)
        for name, value in _record_fields(plan, draft).items():
            setattr(row, name, value)

        if (
            _latest_compaction_id(locked) != snap.latest_compaction_id
            or locked.view_start_seq != timeline.view_start_seq
        ):
            reason = f"{SUPERSEDED}; {errors}" if errors else SUPERSEDED
            _store(row, status=Compaction.Status.SKIPPED, started=started, error=reason)
            return CompactionOutcome(
                status=Compaction.Outcome.SKIPPED, compaction_id=row.pk, error=SUPERSEDED
            )

        # Blocks contributed since the plan are retained: count them in before and after.
        retained = selectors.tokens_from_seq(timeline=locked, seq=plan.first_retained_seq)
        result = compaction_result(plan, summary=summary.to_value(), retained_tokens=retained)
        after = result.after_tokens
        if not result.accepted:
            _store(row, status=Compaction.Status.REJECTED, started=started, after_tokens=after)
            return CompactionOutcome(
                status=Compaction.Outcome.REJECTED,
                compaction_id=row.pk,
                before_tokens=plan.before_tokens,
                after_tokens=after,
            )
        if locked.next_seq >= SEQ_LIMIT:  # no seq left for the summary block
            _store(row, status=Compaction.Status.REJECTED, started=started, after_tokens=after, error=FULL)
            return CompactionOutcome(status=Compaction.Outcome.REJECTED, compaction_id=row.pk, error=FULL)
        summary.timeline = locked
        summary.seq = locked.next_seq
        summary.save()
        Timeline.objects.filter(pk=locked.pk).update(next_seq=F("next_seq") + 1, version=F("version") + 1)
        _store(
            row, status=Compaction.Status.APPLIED, started=started, summary_block=summary, after_tokens=after
        )
    return CompactionOutcome(
        status=Compaction.Outcome.APPLIED,
        compaction_id=row.pk,
        summary_path=summary.path,
        covered_turn_ids=plan.covered_turn_ids,
        split_turn_id=plan.split_turn_id,
        before_tokens=plan.before_tokens,
        after_tokens=after,
        compacted_tokens=plan.compacted_tokens,
        error=errors,
    )


def _store(row: Compaction, *, status: str, started: float, **fields: Any) -> None:
    """Write the final state of a compaction row (inside the apply transaction)."""
    for name, value in fields.items():
        setattr(row, name, value)
    row.status = status
    row.finished_at = timezone.now()
    row.duration_ms = int((time.monotonic() - started) * 1000)
    if row.pk is None:
        row.save()
    else:  # by its timeline too: sharded by conversation, the update stays on one shard
        values = {
            f.attname: getattr(row, f.attname) for f in Compaction._meta.concrete_fields if not f.primary_key
        }
        Compaction.objects.filter(pk=row.pk, timeline_id=row.timeline_id).update(**values)
    metrics.observe_compaction(trigger=row.trigger, status=status, seconds=row.duration_ms / 1000)
