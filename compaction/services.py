"""Compaction in the shell (DESIGN §6): plan on a snapshot, summarize outside any transaction,
apply in a short transaction that checks nothing it planned against has changed.

A timeline has at most one compaction in flight: the ``Compaction`` row in status ``running`` is
the claim (a partial unique index), so a second concurrent run becomes a no-op.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from compaction import signals
from compaction.digest import build_digest
from compaction.planner import CompactionPlan, build_summary_block, compaction_is_accepted, plan_compaction
from compaction.summarizer_factory import configured_summarizer, fallback_summarizer
from compaction.summarizers import Summarizer, summarize_with_fallback
from timeline_app import selectors
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.rendering.blocks import Block as BlockValue
from timeline_app.rendering.costs import block_tokens
from timeline_app.rendering.settings import RenderSettings

logger = logging.getLogger(__name__)

# A claim older than this belongs to a worker that died; it is released so work can go on.
STALE_CLAIM = timedelta(minutes=10)


@dataclass(frozen=True)
class CompactionOutcome:
    """What one compaction attempt did. ``status``: applied, rejected, skipped, busy, failed."""

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


def _claim(*, timeline: Timeline, trigger: str) -> Compaction | None:
    now = timezone.now()
    Compaction.objects.filter(
        timeline=timeline, status=Compaction.Status.RUNNING, started_at__lt=now - STALE_CLAIM
    ).update(
        status=Compaction.Status.FAILED,
        error="abandoned: the worker stopped before finishing",
        finished_at=now,
    )
    try:
        with transaction.atomic():
            return Compaction.objects.create(timeline=timeline, trigger=trigger, started_at=now)
    except IntegrityError:
        return None


def _finish(record: Compaction, *, status: str, started: float, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(record, name, value)
    record.status = status
    record.finished_at = timezone.now()
    record.duration_ms = int((time.monotonic() - started) * 1000)
    record.save()


def compaction_run(
    *,
    timeline: Timeline,
    settings: RenderSettings,
    trigger: str,
    force: bool = False,
    system_tokens: int = 0,
    summarizer: Summarizer | None = None,
) -> CompactionOutcome:
    """Compact ``timeline`` if it needs it (or when forced). Safe to call concurrently."""
    window = selectors.visible_window(timeline=timeline)
    plan = plan_compaction(window, system_tokens=system_tokens, settings=settings, force=force)
    if plan is None:
        return CompactionOutcome(status="skipped")
    record = _claim(timeline=timeline, trigger=trigger)
    if record is None:
        return CompactionOutcome(status="busy")
    started = time.monotonic()
    try:
        return _summarize_and_apply(
            timeline=timeline,
            record=record,
            plan=plan,
            window=window,
            settings=settings,
            summarizer=summarizer or configured_summarizer(),
            started=started,
        )
    except Exception as exc:
        logger.exception("compaction %s of timeline %s failed", record.pk, timeline.pk)
        _finish(
            record,
            status=Compaction.Status.FAILED,
            started=started,
            error=f"{type(exc).__name__}: {exc}"[:2000],
        )
        raise


def _summarize_and_apply(
    *,
    timeline: Timeline,
    record: Compaction,
    plan: CompactionPlan,
    window: list[BlockValue],
    settings: RenderSettings,
    summarizer: Summarizer,
    started: float,
) -> CompactionOutcome:
    signals.on_before_compaction.send(
        sender=Compaction,
        timeline=timeline,
        trigger=record.trigger,
        payload={"before_tokens": plan.before_tokens},
    )
    previous = plan.previous_summary
    summarize_started = time.monotonic()
    history = summarize_with_fallback(
        summarizer,
        fallback_summarizer(),
        blocks=plan.summarized,
        previous_summary=previous.text if previous else None,
        max_tokens=settings.summary_max_tokens,
        purpose="history",
    )
    split = None
    if plan.is_split:
        split = summarize_with_fallback(
            summarizer,
            fallback_summarizer(),
            blocks=plan.split_prefix,
            previous_summary=None,
            max_tokens=settings.split_prefix_max_tokens,
            purpose="split_turn",
        )
    summarize_ms = int((time.monotonic() - summarize_started) * 1000)
    errors = "; ".join(e for e in (history.error, split.error if split else None) if e)
    previous_digest = previous.meta.get("compaction_digest") if previous else None
    digest = build_digest(plan.compacted, previous=previous_digest)
    turn_id = selectors.timeline_current_turn_id(timeline=timeline) or (window[-1].turn_id if window else "")
    fields = build_summary_block(
        plan,
        summary_text=history.text,
        split_text=split.text if split else None,
        digest=digest,
        turn_id=turn_id,
    )
    summary = Block(
        turn_id=fields["turn_id"],
        type=fields["type"],
        author=fields["author"],
        ts=_iso_now(),
        mime=fields["mime"],
        text=fields["text"],
        path=fields["path"],
        meta=fields["meta"],
    )
    summary.tokens = block_tokens(summary.to_value())
    common = {
        "summarizer": history.summarizer,
        "model": history.model,
        "error": errors,
        "summarize_ms": summarize_ms,
        "before_tokens": plan.before_tokens,
        "compacted_tokens": plan.compacted_tokens,
        "covered_turn_ids": list(plan.covered_turn_ids),
        "split_turn_id": plan.split_turn_id or "",
        "first_retained_seq": plan.first_retained_seq,
        "covered_from_seq": plan.compacted[0].seq if plan.compacted else None,
        "covered_to_seq": plan.compacted[-1].seq if plan.compacted else None,
        "digest": digest,
    }
    with transaction.atomic(durable=True):
        locked = Timeline.objects.select_for_update().get(pk=timeline.pk)
        latest = selectors.latest_applied_compaction(timeline=locked)
        expected = previous.seq if previous else None
        if (latest.summary_block.seq if latest and latest.summary_block else None) != expected:
            _finish(
                record,
                status=Compaction.Status.SKIPPED,
                started=started,
                **common,
                error="superseded by another compaction",
            )
            return CompactionOutcome(status="skipped", compaction_id=record.pk)
        retained = selectors.tokens_from_seq(timeline=locked, seq=plan.first_retained_seq)
        after = plan.system_tokens + summary.tokens + retained
        if not compaction_is_accepted(plan.before_tokens + (retained - plan.retained_tokens), after):
            _finish(record, status=Compaction.Status.REJECTED, started=started, after_tokens=after, **common)
            return CompactionOutcome(
                status="rejected",
                compaction_id=record.pk,
                before_tokens=plan.before_tokens,
                after_tokens=after,
            )
        summary.timeline = locked
        summary.seq = locked.next_seq
        summary.save()
        Timeline.objects.filter(pk=locked.pk).update(next_seq=F("next_seq") + 1, version=F("version") + 1)
        _finish(
            record,
            status=Compaction.Status.APPLIED,
            started=started,
            summary_block=summary,
            after_tokens=after,
            **common,
        )
    outcome = CompactionOutcome(
        status="applied",
        compaction_id=record.pk,
        summary_path=summary.path,
        covered_turn_ids=plan.covered_turn_ids,
        split_turn_id=plan.split_turn_id,
        before_tokens=plan.before_tokens,
        after_tokens=after,
        compacted_tokens=plan.compacted_tokens,
    )
    signals.on_after_compaction.send(
        sender=Compaction,
        timeline=timeline,
        trigger=record.trigger,
        payload={
            "before_tokens": plan.before_tokens,
            "after_tokens": after,
            "compacted_tokens": plan.compacted_tokens,
        },
    )
    return outcome


def _iso_now() -> str:
    from timeline_app.services import iso_now

    return iso_now()
