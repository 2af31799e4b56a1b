"""``POST …/compact/`` without ``wait``: a compaction asked for now, run by the worker.

The request creates the compaction row (status ``queued``, with the Celery task id chosen here) in
the same short transaction that checks for one in flight, so the 202 names a row that
``GET …/compactions/{id}`` can follow from the start; the task claims that very row and finishes it
(``applied``, ``rejected``, ``skipped`` with the reason, ``failed``). While a compaction of the
context is queued or running, asking again answers that one: a second concurrent run stays a no-op.
A queued row whose task never started within ``STALE_CLAIM`` (the broker lost it) is marked failed
when the next request comes.
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction.background import compaction_enqueue
from timeline_app.services.compaction.claims import ABANDONED, STALE_CLAIM
from timeline_app.services.conversations import timeline_lock

NOT_QUEUED = "not queued: the broker did not take the task"


def compaction_request(*, timeline: Timeline, force: bool) -> Compaction:
    """Queue a manual compaction of ``timeline``, or answer the one already queued or running."""
    now = timezone.now()
    with transaction.atomic(durable=True):
        locked = timeline_lock(timeline=timeline, fields=("id",))
        pending = Compaction.objects.filter(
            timeline=locked, status__in=[Compaction.Status.QUEUED, Compaction.Status.RUNNING]
        )
        pending.filter(status=Compaction.Status.QUEUED, started_at__lt=now - STALE_CLAIM).update(
            status=Compaction.Status.FAILED, error=ABANDONED, finished_at=now
        )
        current = pending.order_by("-pk").first()
        if current is not None:
            return current
        row = Compaction.objects.create(
            timeline=locked,
            trigger=Compaction.Trigger.MANUAL,
            status=Compaction.Status.QUEUED,
            task_id=str(uuid.uuid4()),
            started_at=now,
        )
    try:
        compaction_enqueue(
            timeline_id=timeline.pk,
            trigger=Compaction.Trigger.MANUAL,
            force=force,
            compaction_id=row.pk,
            task_id=row.task_id,
        )
    except Exception:
        Compaction.objects.filter(pk=row.pk, status=Compaction.Status.QUEUED).update(
            status=Compaction.Status.FAILED, error=NOT_QUEUED, finished_at=timezone.now()
        )
        raise
    row.refresh_from_db()  # eager tasks (the embedded mode) have run already
    return row
