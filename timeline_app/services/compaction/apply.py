"""The apply side of a compaction (DESIGN §6): the snapshot a plan is made on, and the short
transaction that stores its summary only if nothing the plan read has changed.

The apply transaction locks the conversation and timeline rows (``timeline_lock``), then the claim
row, and writes only when the claim is still this run's, the latest applied compaction is the one
the plan started from, and the context's view was not cleared meanwhile. Blocks contributed during
the summary are not read by the plan and never rewritten: the summary goes in front of the first
retained block, so they stay visible after it, in order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from compaction.planner import CompactionPlan, compaction_result, plan_compaction
from timeline_app import metrics, selectors
from timeline_app.domain.blocks import SEQ_LIMIT
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction.claims import ERASED, TAKEN_OVER
from timeline_app.services.compaction.summary import SummaryDraft, summary_usage_fields
from timeline_app.services.conversations import timeline_lock
from timeline_app.services.operations import compaction_operation_record

SUPERSEDED = "superseded: the timeline was compacted or cleared meanwhile"
FULL = "rejected: the context is full (no seq left for a summary block)"


def not_smaller(*, before_tokens: int, after_tokens: int) -> str:
    """Why a summary was rejected, with the numbers that decided it (DESIGN §4)."""
    return f"rejected: the context would not shrink ({before_tokens:,} tokens before, {after_tokens:,} after)"


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
class Snapshot:
    """What a plan was made against: checked again under lock before applying."""

    timeline: Timeline
    latest_compaction_id: int | None
    window: list[BlockValue]
    plan: CompactionPlan | None
    threshold_tokens: int | None = None


def snapshot(*, timeline_id: int, settings: RenderSettings, system_tokens: int, force: bool) -> Snapshot:
    fresh = Timeline.objects.filter(pk=timeline_id).first()
    if fresh is None:
        raise ConversationErased(ERASED)
    # The latest compaction is read before the window: if one applies in between, the apply check
    # sees a newer one and skips (never the other way round).
    latest_id = latest_compaction_id(fresh)
    window = selectors.visible_window(timeline=fresh)
    plan = plan_compaction(window, system_tokens=system_tokens, settings=settings, force=force)
    return Snapshot(
        timeline=fresh,
        latest_compaction_id=latest_id,
        window=window,
        plan=plan,
        threshold_tokens=settings.compaction_limit,
    )


def latest_compaction_id(timeline: Timeline) -> int | None:
    return (
        Compaction.objects.filter(timeline=timeline, status=Compaction.Status.APPLIED)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )


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


def summary_apply(
    *,
    snap: Snapshot,
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
        row.threshold_tokens = snap.threshold_tokens

        if (
            latest_compaction_id(locked) != snap.latest_compaction_id
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
            why = not_smaller(before_tokens=result.before_tokens, after_tokens=after)
            _store(
                row,
                status=Compaction.Status.REJECTED,
                started=started,
                after_tokens=after,
                error=f"{why}; {errors}" if errors else why,
            )
            return CompactionOutcome(
                status=Compaction.Outcome.REJECTED,
                compaction_id=row.pk,
                before_tokens=plan.before_tokens,
                after_tokens=after,
                error=why,
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
    compaction_operation_record(row)  # the operations log, in the apply transaction
    metrics.observe_compaction(trigger=row.trigger, status=status, seconds=row.duration_ms / 1000)
