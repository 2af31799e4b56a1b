"""The summary rule, in one package (pure: no Django, no I/O; only the two adapters import an SDK).

* ``sections``: the one section list every summarizer writes and reads back; ``block``: the stored
  ``conv.range.summary`` block; ``base``: the :class:`Summarizer` protocol and the transcript.
* ``extractive``: :class:`ExtractiveSummarizer` — deterministic, offline and fast, the embedded
  default and the fallback (``fallback``) whenever an LLM summarizer fails. It reads each block
  through its cue rules (``cues``), what it takes from a block (``extract``), errors and artifacts
  by shape (``shapes``), and cuts its lines to the budget (``budget``).
* ``anthropic`` / ``openai``: the LLM summarizers (imported lazily, by the shell), asked by ``prompt``.

All are *progressive* (seed 002): they receive the previous summary's text and fold it into the
new one, so a chain of compactions keeps the earliest goals and paths.
"""

from compaction.summary.base import Purpose, Summarizer, SummarizerError, transcript
from compaction.summary.budget import truncate_to_tokens
from compaction.summary.extract import (
    artifacts_of,
    constraint_sentences,
    decision_sentences,
    identifier_lines,
    pending_steps,
)
from compaction.summary.extractive import ExtractiveSummarizer
from compaction.summary.fallback import SummaryOutcome, redact, summarize_with_fallback

__all__ = [
    "ExtractiveSummarizer",
    "Purpose",
    "Summarizer",
    "SummarizerError",
    "SummaryOutcome",
    "artifacts_of",
    "constraint_sentences",
    "decision_sentences",
    "identifier_lines",
    "pending_steps",
    "redact",
    "summarize_with_fallback",
    "transcript",
    "truncate_to_tokens",
]
