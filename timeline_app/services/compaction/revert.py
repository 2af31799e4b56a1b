"""Take a compaction back (``POST …/compactions/{id}/revert/``): the context's window is again what
it was before it, to the byte.

A compaction never changes a stored block: it adds a summary block and an ``applied`` row whose
``first_retained_seq`` moves the window's start (``Timeline.window_start``). Reverting marks the row
``reverted`` (who and when), so the window is the previous applied compaction's again, or the whole
context; the summary block stays stored, hidden with the reason ``reverted`` and out of every window
(summaries are shown only as the latest applied compaction's). Blocks appended since the compaction
were in its window and stay in the reverted one, in order.

Only the newest applied compaction of a context can be reverted (a 409 names it otherwise), so the
window steps back one compaction at a time. Reverting a reverted compaction changes nothing.

Locks: the erase path's (``timeline_lock``: the conversation, then the context row), then the
compaction row. An append allocates its seq under the same lock, so none is lost; a compaction
running meanwhile finds at its apply check that the latest applied compaction is no longer the one
it planned from and is skipped as ``superseded`` (its plan read a window that no longer exists).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from timeline_app.errors import Conflict, NotFound
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.services.conversations import timeline_lock
from timeline_app.services.operations import compaction_operation_record

REVERTED_REASON = "reverted"
"""``hidden_reason`` of a reverted compaction's summary block."""


def compaction_revert(*, timeline: Timeline, public_id: str, actor: str) -> Compaction:
    """Revert the context's compaction ``public_id`` (its newest applied one) as ``actor``."""
    with transaction.atomic(durable=True):
        locked = timeline_lock(timeline=timeline)
        row = Compaction.objects.select_for_update().filter(timeline=locked, public_id=public_id).first()
        if row is None:
            raise NotFound(f"no compaction {public_id!r} in this context", details={"id": public_id})
        if row.status == Compaction.Status.REVERTED:
            return _loaded(row)
        newest = (
            Compaction.objects.applied()
            .filter(timeline=locked)
            .order_by("-id")
            .values_list("public_id", flat=True)
            .first()
        )
        if row.status != Compaction.Status.APPLIED or newest != public_id:
            raise Conflict(
                f"only the newest applied compaction of a context can be reverted: {newest}"
                if newest
                else "this context has no applied compaction to revert",
                details={"id": public_id, "status": row.status, "revertible": newest},
            )
        now = timezone.now()
        Compaction.objects.filter(pk=row.pk, timeline=locked).update(
            status=Compaction.Status.REVERTED, reverted_at=now, reverted_by=actor[:150]
        )
        if row.summary_block_id is not None:
            Block.objects.filter(pk=row.summary_block_id, timeline=locked).update(
                hidden=True, hidden_reason=REVERTED_REASON
            )
        Timeline.objects.filter(pk=locked.pk).update(version=F("version") + 1)
        row.reverted_by = actor[:150]
        compaction_operation_record(row, status=Compaction.Status.REVERTED, now=now)
    row.refresh_from_db()
    return _loaded(row)


def _loaded(row: Compaction) -> Compaction:
    return Compaction.objects.select_related("summary_block").get(pk=row.pk, timeline_id=row.timeline_id)
