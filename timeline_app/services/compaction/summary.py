"""The summary in the shell: the configured summarizer (reads settings), a summary drafted with
it, the context's cached prefix an LLM summary may resend (``summary_cache_prefix``), and the
compaction row's record of the summary call (``summary_usage_fields``).

Precedence: ``TIMELINE_SUMMARIZER_CLASS`` (a dotted path to a class or factory called with no
arguments), then ``TIMELINE_SUMMARIZER`` (``anthropic``, ``openai`` or ``extractive``). The
extractive summarizer is always the fallback. A conversation's ``summary_model`` setting picks the
LLM summarizer's model for that conversation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.module_loading import import_string

from compaction.digest import build_digest
from compaction.planner import CompactionPlan, summarizable
from compaction.summary import ExtractiveSummarizer, Summarizer, SummaryOutcome, summarize_with_fallback
from compaction.summary.block import build_summary_block
from compaction.summary.prompt import CachedPrefix
from timeline_app import selectors
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.times import iso_utc
from timeline_app.models import Block, Timeline
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_app.rendering.prefix import stored_checkpoints
from timeline_app.rendering.request_head import request_head
from timeline_app.rendering.ttl import stored_costs
from timeline_app.rendering.usage.pricing import call_cost, price_for
from timeline_app.rendering.usage.reported import UsageError, read_usage
from timeline_app.services.model_lifecycle import warn_if_retired
from timeline_app.services.usage import prices


def configured_summarizer(*, model: str | None = None) -> Summarizer:
    """The configured summarizer; ``model`` (a conversation's ``summary_model``) overrides
    ``TIMELINE_SUMMARY_MODEL`` for the LLM summarizers."""
    dotted = settings.TIMELINE_SUMMARIZER_CLASS
    if dotted:
        return _custom_summarizer(dotted)
    if settings.TIMELINE_SUMMARIZER in ("anthropic", "openai"):
        warn_if_retired(model or settings.TIMELINE_SUMMARY_MODEL, where="summary model")
    if settings.TIMELINE_SUMMARIZER == "anthropic":
        # Lazy: the anthropic SDK is heavy and only needed when this summarizer is configured.
        from compaction.summary.anthropic import AnthropicSummarizer

        return AnthropicSummarizer(
            api_key=settings.ANTHROPIC_API_KEY,
            model=model or settings.TIMELINE_SUMMARY_MODEL,
            max_retries=settings.TIMELINE_ANTHROPIC_MAX_RETRIES,
            timeout=settings.TIMELINE_ANTHROPIC_TIMEOUT_SECONDS,
        )
    if settings.TIMELINE_SUMMARIZER == "openai":
        from compaction.summary.openai import OpenAISummarizer

        return OpenAISummarizer(
            api_key=settings.OPENAI_API_KEY,
            model=model or settings.TIMELINE_SUMMARY_MODEL,
            base_url=settings.TIMELINE_OPENAI_BASE_URL or None,
            max_retries=settings.TIMELINE_OPENAI_MAX_RETRIES,
            timeout=settings.TIMELINE_OPENAI_TIMEOUT_SECONDS,
            token_limit_param=settings.TIMELINE_OPENAI_TOKEN_LIMIT_PARAM,
        )
    return ExtractiveSummarizer()


def summary_model_problem(model: str) -> str | None:
    """Why ``model`` cannot be a conversation's ``summary_model`` under the configured summarizer
    (None: it can). Anthropic takes Claude models; an OpenAI-compatible server takes any name but
    those the price table lists as Anthropic's; the extractive summarizer takes none."""
    if settings.TIMELINE_SUMMARIZER_CLASS:
        return None  # a custom summarizer reads its own settings
    provider = settings.TIMELINE_SUMMARIZER
    if provider == "anthropic":
        return (
            None
            if model.startswith("claude-")
            else "the anthropic summarizer takes a Claude model (claude-…)"
        )
    if provider == "openai":
        priced = price_for(prices(), model)
        if priced is not None and priced[1].provider != "openai":
            return f"{model} is an {priced[1].provider} model; the summarizer is OpenAI-compatible"
        return None
    return "no LLM summarizer is configured (TIMELINE_SUMMARIZER=extractive)"


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


@dataclass(frozen=True)
class SummaryDraft:
    """A summary block written for a plan but not stored yet (``block`` is an unsaved row)."""

    block: Block
    history: SummaryOutcome
    split: SummaryOutcome | None
    digest: dict[str, Any]
    summarize_ms: int

    @property
    def errors(self) -> str:
        return "; ".join(e for e in (self.history.error, self.split.error if self.split else None) if e)


def draft_summary(
    *, plan: CompactionPlan, settings: RenderSettings, summarizer: Summarizer, turn_id: str
) -> SummaryDraft:
    """Summarize a plan (progressively: the previous summary is fed in), the split turn's prefix
    under its own budget, and the cumulative digest; the extractive summary stands in for any
    summarizer failure. Never called inside a transaction: an LLM call may take seconds."""
    previous = plan.previous_summary
    started = time.monotonic()
    history = summarize_with_fallback(
        summarizer,
        fallback_summarizer(),
        blocks=plan.history_inputs,
        previous_summary=previous.text if previous else None,
        max_tokens=settings.summary_max_tokens,
        purpose="history",
    )
    split = None
    if plan.is_split:
        # The LLM just failed after all its retries: do not make the caller wait for it twice.
        split = summarize_with_fallback(
            summarizer if history.error is None else None,
            fallback_summarizer(),
            blocks=plan.split_inputs,
            previous_summary=None,
            max_tokens=settings.split_prefix_max_tokens,
            purpose="split_turn",
        )
    summarize_ms = int((time.monotonic() - started) * 1000)
    digest = build_digest(
        summarizable(plan.compacted), previous=previous.meta.get("compaction_digest") if previous else None
    )
    fields = build_summary_block(
        plan,
        summary_text=history.text,
        split_text=split.text if split else None,
        digest=digest,
        turn_id=turn_id,
    )
    block = Block(ts=iso_utc(timezone.now()), **fields)
    block.tokens, block.replacement_tokens = stored_costs(block.to_value())
    return SummaryDraft(block=block, history=history, split=split, digest=digest, summarize_ms=summarize_ms)


# ---------------------------------------------------------------- the summary call reading the cache


def summary_cache_prefix(
    *,
    timeline: Timeline,
    window: list[BlockValue],
    plan: CompactionPlan,
    settings: RenderSettings,
    model: str,
    now: datetime,
) -> CachedPrefix | None:
    """The context's last render as a summary request can resend it byte for byte, when the
    provider still caches it: an ``anthropic`` render for this very model, within the cache TTL,
    with its system prompt known (given as text, no tools) and its prefix unchanged since (the
    window renders to the same fingerprint up to its last breakpoint). None otherwise: the
    summarizer then sends the compact transcript."""
    last = selectors.last_render_for_summary(timeline=timeline)
    if last is None or last.format != "anthropic" or not last.cache_points or last.model != model:
        return None
    if not timedelta(0) <= now - last.rendered_at <= timedelta(seconds=settings.cache_ttl_seconds):
        return None
    system = last.system_text
    head = request_head(system_text=system)  # as the API builds it from this text (tokens counted)
    rendered = render_window(
        window,
        settings=settings,
        options=RenderOptions(format="anthropic"),
        system_tokens=head.system_tokens,
        prefix_seed=head.digest,
    )
    end = max(last.cache_points)
    prefix = rendered.prefix
    segments = sum(1 for index in prefix.indices if index <= end)
    if segments == 0 or end >= len(rendered.blocks):
        return None
    # The stored fingerprint must hold the last breakpoint's segment itself (always so up to 1,024
    # segments, and for a breakpoint on the prefix's last segment, the usual ``cache_last``); its
    # digest is cumulative from the seed, so equal there means equal all the way up to it.
    stored = dict(
        stored_checkpoints(bytes(last.segment_digests), stride=last.segment_stride, count=last.segment_count)
    )
    if stored.get(segments - 1) != prefix.digests[segments - 1]:
        return None
    marked = set(last.cache_points)
    parts = tuple(
        {
            **{k: v for k, v in part.items() if k != "cache_control"},
            **({"cache_control": {"type": "ephemeral"}} if i in marked else {}),
        }
        for i, part in enumerate(rendered.blocks[: end + 1])
    )
    keep = plan.retained[0] if plan.retained else None
    keep_from = (keep.path or f"{keep.type}#{keep.seq}") if keep is not None else "the end"
    return CachedPrefix(system=system, parts=parts, keep_from=keep_from)


def summary_usage_fields(*, model: str, usage: dict[str, Any] | None, cache: str) -> dict[str, Any]:
    """The compaction row's record of its summary call: usage, cost (price table), warm or cold."""
    if not usage:
        return {"summary_usage": {}, "summary_cost_usd": None, "summary_cache": cache}
    priced = price_for(prices(), model)
    cost = None
    try:
        if priced is not None:
            cost = call_cost(priced[1], read_usage(usage).tokens)
    except UsageError:
        cost = None
    return {"summary_usage": usage, "summary_cost_usd": cost, "summary_cache": cache}
