"""The configured summarizer (shell: reads settings)."""

from __future__ import annotations

from django.conf import settings

from compaction.summarizers import ExtractiveSummarizer, Summarizer


def configured_summarizer() -> Summarizer:
    if settings.TIMELINE_SUMMARIZER == "anthropic":
        from compaction.anthropic_summarizer import AnthropicSummarizer

        return AnthropicSummarizer(api_key=settings.ANTHROPIC_API_KEY, model=settings.TIMELINE_SUMMARY_MODEL)
    return ExtractiveSummarizer()


def fallback_summarizer() -> Summarizer:
    return ExtractiveSummarizer()
