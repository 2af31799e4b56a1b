"""The configured summarizer (shell: reads settings).

Precedence: ``TIMELINE_SUMMARIZER_CLASS`` (a dotted path to a class or factory called with no
arguments), then ``TIMELINE_SUMMARIZER`` (``anthropic`` or ``extractive``). The extractive
summarizer is always the fallback.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from compaction.summarizers import ExtractiveSummarizer, Summarizer


def configured_summarizer() -> Summarizer:
    dotted = getattr(settings, "TIMELINE_SUMMARIZER_CLASS", "")
    if dotted:
        return _custom_summarizer(dotted)
    if settings.TIMELINE_SUMMARIZER == "anthropic":
        # Lazy: the anthropic SDK is heavy and only needed when this summarizer is configured.
        from compaction.anthropic_summarizer import AnthropicSummarizer

        return AnthropicSummarizer(
            api_key=settings.ANTHROPIC_API_KEY,
            model=settings.TIMELINE_SUMMARY_MODEL,
            max_retries=settings.TIMELINE_ANTHROPIC_MAX_RETRIES,
            timeout=settings.TIMELINE_ANTHROPIC_TIMEOUT_SECONDS,
        )
    return ExtractiveSummarizer()


def fallback_summarizer() -> Summarizer:
    return ExtractiveSummarizer()


def _custom_summarizer(dotted: str) -> Summarizer:
    try:
        factory = import_string(dotted)
    except ImportError as exc:
        raise ImproperlyConfigured(f"TIMELINE_SUMMARIZER_CLASS {dotted!r} cannot be imported: {exc}") from exc
    summarizer = factory()
    if not isinstance(summarizer, Summarizer):
        raise ImproperlyConfigured(
            f"TIMELINE_SUMMARIZER_CLASS {dotted!r} must build an object with name, model and summarize()"
        )
    return summarizer
