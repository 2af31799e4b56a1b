"""Compaction in the shell, one module per use case (docs/architecture.md).

Callers import from here: ``run`` (``compaction_run``, and ``timeline_compact``, the compact
task's work), ``requests`` (``compaction_request``: ``POST …/compact/`` queued for the worker),
``revert`` (``compaction_revert``), ``sweep`` (the beat job) and ``nudge`` (a render past the soft
threshold). Inside, used by those: ``claims`` (the one compaction in flight per timeline),
``apply`` (the snapshot a plan is made on and the short apply transaction), ``summary`` (the
configured summarizer, the drafted summary, the cache it may read, its cost) and ``background``
(the soft threshold, which contexts qualify, the compact task's name).
"""

from timeline_app.services.compaction.apply import SUPERSEDED, CompactionOutcome
from timeline_app.services.compaction.background import COMPACT_TASK, background_settings
from timeline_app.services.compaction.claims import ABANDONED, STALE_CLAIM, TAKEN_OVER
from timeline_app.services.compaction.nudge import NUDGE_SECONDS, compaction_nudge
from timeline_app.services.compaction.requests import compaction_request
from timeline_app.services.compaction.revert import compaction_revert
from timeline_app.services.compaction.run import (
    BUSY,
    NOTHING_TO_DO,
    compaction_run,
    timeline_compact,
)
from timeline_app.services.compaction.summary import (
    configured_summarizer,
    draft_summary,
    fallback_summarizer,
    summary_model_problem,
)
from timeline_app.services.compaction.sweep import compaction_sweep, timelines_past_soft_threshold

__all__ = [
    "ABANDONED",
    "BUSY",
    "COMPACT_TASK",
    "NOTHING_TO_DO",
    "NUDGE_SECONDS",
    "STALE_CLAIM",
    "SUPERSEDED",
    "TAKEN_OVER",
    "CompactionOutcome",
    "background_settings",
    "compaction_nudge",
    "compaction_request",
    "compaction_revert",
    "compaction_run",
    "compaction_sweep",
    "configured_summarizer",
    "draft_summary",
    "fallback_summarizer",
    "summary_model_problem",
    "timeline_compact",
    "timelines_past_soft_threshold",
]
