"""What every background compaction shares: the soft threshold it plans against, which contexts
qualify (their strategy summarizes), and the compact task it is queued as.

Services never import the task module (tasks call services): the task is addressed by its
registered name in Celery's registry, which keeps eager mode working (``send_task`` would not).
"""

from __future__ import annotations

from dataclasses import replace

from celery import current_app

from compaction.strategies import SUMMARIZE
from timeline_app.domain.settings import RenderSettings
from timeline_app.models import Timeline
from timeline_app.selectors.contexts import effective_strategy

COMPACT_TASK = "compaction.tasks.compact_timeline"


def background_settings(settings: RenderSettings, *, soft_threshold: float) -> RenderSettings:
    """A background compaction plans against the soft threshold (never above the hard one), so it
    runs before a render would have to compact and leaves the context well under it."""
    return replace(settings, threshold=min(soft_threshold, settings.threshold))


def summarizes(timeline: Timeline) -> bool:
    """Whether the context uses the seeds' summary compaction (named contexts may truncate or
    slide a window instead: background summaries would be wasted on them)."""
    return bool(effective_strategy(timeline=timeline)["name"] == SUMMARIZE)


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
