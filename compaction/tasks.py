"""Celery tasks: thin, ids in, the service does the work."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from compaction.services import compaction_run
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.settings import resolve_settings


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=False)
def compact_timeline(
    timeline_id: int, trigger: str = Compaction.Trigger.BACKGROUND, force: bool = False
) -> dict[str, Any]:
    """Compact one timeline. Idempotent: a run that finds nothing to do, or another run in flight,
    is a no-op (``skipped`` / ``busy``)."""
    timeline = Timeline.objects.select_related("conversation").filter(pk=timeline_id).first()
    if timeline is None:
        return {"status": "skipped", "reason": "timeline gone"}
    settings = resolve_settings(timeline.conversation.settings)
    outcome = compaction_run(timeline=timeline, settings=settings, trigger=trigger, force=force)
    return outcome.as_dict()
