"""Summarizers behind one protocol (pure package: no Django, no ``anthropic``, no I/O).

* :class:`ExtractiveSummarizer` (``extractive``: what it takes from a block in ``extract``, how
  its lines are cut to the budget in ``budget``): deterministic, offline and fast — the embedded
  default and the fallback whenever an LLM summarizer fails.
* :class:`compaction.summary.anthropic.AnthropicSummarizer` and
  :class:`compaction.summary.openai.OpenAISummarizer` (separate modules) call an LLM.

All are *progressive* (seed 002): they receive the previous summary's text and fold it into the
new one, so a chain of compactions keeps the earliest goals and paths. The section list they write
is :mod:`compaction.summary.sections`.
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
