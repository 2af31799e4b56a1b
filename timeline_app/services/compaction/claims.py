"""The claim on a timeline's compaction: bookkeeping of ``Compaction`` rows in the shell.

A timeline has at most one compaction in flight: the ``Compaction`` row in status ``running`` is
the claim (a partial unique index), so a second concurrent run becomes a no-op (``busy``). A claim
is released when its run finishes, when it is older than ``STALE_CLAIM`` (its process died), or
when a redelivery of the same Celery task asks for it (its worker died; ``task_id`` matches).
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from timeline_app import metrics
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.services.operations import compaction_operation_record

# A claim older than this belongs to a process that died; it is released so work can go on.
STALE_CLAIM = timedelta(minutes=10)
WAIT_POLL_SECONDS = 0.05

ABANDONED = "abandoned: the process stopped before finishing"
TAKEN_OVER = "abandoned: taken over by a redelivery of the same task"
ERASED = "erased: the conversation was erased meanwhile"


def claim(*, timeline: Timeline, trigger: str, task_id: str) -> Compaction | None:
    now = timezone.now()
    running = Compaction.objects.filter(timeline=timeline, status=Compaction.Status.RUNNING)
    running.filter(started_at__lt=now - STALE_CLAIM).update(
        status=Compaction.Status.FAILED, error=ABANDONED, finished_at=now
    )
    if task_id:
        # Redelivered (acks_late) after its worker died: the dead run's claim is this task's own.
        running.filter(task_id=task_id).update(
            status=Compaction.Status.FAILED, error=TAKEN_OVER, finished_at=now
        )
    try:
        # Durable: the claim commits before the summarizer is called (the slow part), so other
        # runs see it; inside a caller's transaction it would not (and the caller would hold its
        # locks across the LLM call): RuntimeError.
        with transaction.atomic(durable=True):
            return Compaction.objects.create(
                timeline=timeline, trigger=trigger, task_id=task_id, started_at=now
            )
    except IntegrityError:
        # Another run's claim, or no timeline to claim any more (its foreign key).
        if not Timeline.objects.filter(pk=timeline.pk).exists():
            raise ConversationErased(ERASED) from None
        return None


def claim_requested(*, timeline: Timeline, record_id: int, task_id: str) -> Compaction | None:
    """Turn the ``queued`` row ``POST …/compact/`` created into this run's claim (the same row, so
    the id the 202 gave names the outcome). A redelivery of the same task takes its own running row
    back. None when another compaction holds the claim or the row is no longer queued."""
    now = timezone.now()
    Compaction.objects.filter(
        timeline=timeline, status=Compaction.Status.RUNNING, started_at__lt=now - STALE_CLAIM
    ).update(status=Compaction.Status.FAILED, error=ABANDONED, finished_at=now)
    mine = Compaction.objects.filter(pk=record_id, timeline=timeline)
    try:
        with transaction.atomic(durable=True):  # committed before the summarizer runs, as ``claim``
            taken = mine.filter(status=Compaction.Status.QUEUED).update(
                status=Compaction.Status.RUNNING, started_at=now, task_id=task_id
            )
    except IntegrityError:  # another compaction of this timeline is running
        return None
    if not taken and task_id:
        taken = mine.filter(status=Compaction.Status.RUNNING, task_id=task_id).update(started_at=now)
    return mine.first() if taken else None


def settle_request(
    record_id: int | None,
    *,
    timeline: Timeline,
    trigger: str,
    error: str,
    before_tokens: int,
    threshold_tokens: int | None = None,
) -> int:
    """Finish as ``skipped`` a requested (``queued``) row that this run did not claim, or write a
    ``skipped`` row for an attempt that had none (``record_id`` None): every attempt is a row, and
    an entry of the operations log in the same transaction."""
    now = timezone.now()
    fields = {
        "status": Compaction.Status.SKIPPED,
        "error": error,
        "before_tokens": before_tokens,
        "threshold_tokens": threshold_tokens,
    }
    with transaction.atomic():
        if record_id is None:
            row = Compaction.objects.create(
                timeline=timeline, trigger=trigger, started_at=now, finished_at=now, **fields
            )
            compaction_operation_record(row)
            return row.pk
        settled = Compaction.objects.filter(pk=record_id, status=Compaction.Status.QUEUED)
        if settled.update(finished_at=now, **fields):
            compaction_operation_record(Compaction.objects.get(pk=record_id, timeline_id=timeline.pk))
    return record_id


def release(record: Compaction, *, started: float, **fields: Any) -> bool:
    """Finish a claim that did not apply (conditional: a claim taken over stays as it is)."""
    with transaction.atomic():
        updated = Compaction.objects.filter(pk=record.pk, status=Compaction.Status.RUNNING).update(
            finished_at=timezone.now(), duration_ms=int((time.monotonic() - started) * 1000), **fields
        )
        if updated == 1:  # the operations log, in the same transaction
            compaction_operation_record(record, status=fields["status"], error=fields.get("error", ""))
    if updated == 1:
        metrics.observe_compaction(
            trigger=record.trigger, status=fields["status"], seconds=time.monotonic() - started
        )
    return updated == 1


def wait_for_running(*, timeline: Timeline, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    running = Compaction.objects.filter(timeline=timeline, status=Compaction.Status.RUNNING)
    while running.exists() and time.monotonic() < deadline:
        time.sleep(WAIT_POLL_SECONDS)
