"""The render pipeline in the shell (seed 002 "Render Pipeline Order", DESIGN §4).

1. TTL pruning (hides persisted, cache clock touched) → 2. compaction when over
``threshold × max_tokens`` or forced → 3. slice from the latest summary (the selector's visible
window) → 4. hidden blocks as replacement text → 5. cache points → 6. tail. Steps 3–6 are the pure
``render_window``; this module only loads, persists and calls.
"""

from __future__ import annotations

import gc
import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from compaction.planner import needs_compaction, plan_compaction
from compaction.summarizers import Summarizer
from timeline_app import metrics, selectors
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.blocks import window_summary_seq
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.formats import Source
from timeline_app.rendering.pipeline import Rendered, RenderOptions, render_window
from timeline_app.rendering.prefix import CacheReport, explain_cache
from timeline_app.rendering.recorded_inputs import render_inputs
from timeline_app.rendering.ttl import TtlDecision, apply_hides, plan_ttl_pruning
from timeline_app.rendering.usage.requests import format_provider, spread_read_through
from timeline_app.selectors.contexts import strategy_window
from timeline_app.selectors.settings import timeline_settings_resolved
from timeline_app.services.background import compaction_nudge
from timeline_app.services.compaction import compaction_run
from timeline_app.services.compaction_apply import CompactionOutcome
from timeline_app.services.hiding import hides_store
from timeline_app.services.model_lifecycle import warn_if_retired
from timeline_app.services.render_history import render_record
from timeline_app.services.summarizers import draft_summary, fallback_summarizer
from timeline_app.services.usage import RenderForecast, cache_breakpoint_ttls, cache_rules, render_forecast

OPENAI_NATIVE = frozenset({"openai_responses", "openai_chat"})


@dataclass(frozen=True)
class RenderOutcome:
    rendered: Rendered
    pruning_status: str
    hidden_paths: list[str]
    compaction: CompactionOutcome | None = None
    would_compact: bool = False
    settings: RenderSettings = field(default_factory=RenderSettings)
    # Stored overrides that no longer validate (their defaults were used): ``selectors.settings``.
    ignored_settings: dict[str, str] = field(default_factory=dict)
    # Why the provider's prompt cache could (not) reuse the previous render's prefix.
    cache: CacheReport | None = None
    # The render record's public id and the usage forecast (None for a dry run).
    render_id: str | None = None
    forecast: RenderForecast | None = None


def settings_key(settings: RenderSettings, options: RenderOptions) -> str:
    """A digest of what shapes the cacheable prefix besides the blocks: the settings, the format
    and the contribution filters (the tail's options do not count: the tail is never cached)."""
    shaping = asdict(settings)
    shaping.pop("summary_model")  # the summarizer's model shapes no render
    shaping.pop("continue_text")  # the uncached tail's, like announce
    shaping.pop("budget_note")  # nor does the budget line: it is in the uncached tail
    shape = {
        "settings": shaping,
        "format": options.format,
        "cache_last": options.cache_last,
        "exclude": sorted(options.exclude_contributions),
        "include_only": sorted(options.include_only_contributions),
    }
    if options.cache_breakpoint_ttls:  # GPT-5.6 breakpoints reshape the OpenAI request's head
        shape["cache_breakpoint_ttls"] = list(options.cache_breakpoint_ttls)
    return hashlib.sha256(stable_json(shape).encode()).hexdigest()


def _persist_ttl(*, timeline: Timeline, decision: TtlDecision, now: datetime) -> None:
    with transaction.atomic(durable=True):
        # The context's row first, then its blocks: the order an erase takes them in (after the
        # conversation's row), so the two never deadlock. Erased meanwhile: nothing to update.
        if not Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=now):
            raise ConversationErased("the conversation was erased", details={"conversation": "erased"})
        hides_store(timeline=timeline, hides=decision.hides)
    timeline.cache_last_touch_at = now
    metrics.observe_ttl(status=decision.status, hidden=len(decision.hides))


def _preview_compaction(
    window: list[BlockValue], *, settings: RenderSettings, system_tokens: int, force: bool, turn_id: str
) -> list[BlockValue] | None:
    """The window a compaction would leave, with an in-memory extractive summary (dry runs)."""
    plan = plan_compaction(window, system_tokens=system_tokens, settings=settings, force=force)
    if plan is None:
        return None
    draft = draft_summary(plan=plan, settings=settings, summarizer=fallback_summarizer(), turn_id=turn_id)
    draft.block.seq = 0
    return [draft.block.to_value(), *plan.retained]


_pause_lock = threading.Lock()
_pause_depth = 0
_was_enabled = False
_paused_since = 0.0
# Renders overlapping without a break keep the collector off; after this long, the render that
# ends runs one full collection anyway, so cyclic garbage stays bounded under steady load.
MAX_PAUSE_SECONDS = 2.0
_clock = time.monotonic


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration: process-wide, so counted across
    threads, and back on (if it was on) when the last pause ends. A render turns tens of
    thousands of rows into values, and every 700 allocations the collector walked them again: at
    20,000 blocks that was a third of a warm render (docs/scaling.md). The values hold no
    cycles; whatever garbage a render leaves is collected as usual afterwards, or, while renders
    keep overlapping, by a full collection every ``MAX_PAUSE_SECONDS``."""
    global _pause_depth, _was_enabled, _paused_since
    with _pause_lock:
        if _pause_depth == 0:
            _was_enabled = gc.isenabled()
            _paused_since = _clock()
            gc.disable()
        _pause_depth += 1
    try:
        yield
    finally:
        collect = False
        with _pause_lock:
            _pause_depth -= 1
            if _pause_depth == 0:
                if _was_enabled:
                    gc.enable()
            elif _was_enabled and _clock() - _paused_since > MAX_PAUSE_SECONDS:
                _paused_since = _clock()
                collect = True
        if collect:
            gc.collect()


@collector_paused()
def timeline_render(
    *,
    timeline: Timeline,
    options: RenderOptions,
    now: datetime | None = None,
    system_tokens: int = 0,
    max_tokens: int | None = None,
    force_sanitize: bool = False,
    dry_run: bool = False,
    summarizer: Summarizer | None = None,
    system_digest: str = "",
    model: str = "",
    tools_tokens: int = 0,
    system_text: str = "",
) -> RenderOutcome:
    """Render the timeline for one model call. ``dry_run`` persists nothing (admin preview).

    ``system_digest`` identifies the system prompt (and tools) in the cache fingerprint; every
    render that is not a dry run is recorded with its cache explanation and its usage forecast
    for ``model`` (``tools_tokens`` of tool definitions precede the system prompt). ``system_text``
    (the system prompt, when the caller gave it and no tools) is kept so a compaction can start its
    summary request with this render's prefix while it is cached."""
    if model:
        warn_if_retired(model, where="render model")
    if options.format in OPENAI_NATIVE and not options.cache_breakpoint_ttls:
        options = replace(options, cache_breakpoint_ttls=cache_breakpoint_ttls(model))
    resolved = timeline_settings_resolved(timeline=timeline, max_tokens=max_tokens)
    settings = resolved.settings
    now = now or timezone.now()
    previous, cache_state = None, None
    if not dry_run:  # the previous render and the forecast's cache, in one read
        provider = format_provider(options.format)
        previous, cache_state = selectors.render_memory(
            timeline=timeline,
            provider=provider,
            now=now,
            retention_seconds=cache_rules().retention_seconds(provider),
            # GPT-5.6 breakpoints: the forecast reads written entries (``render_forecast``'s
            # ``request.explicit`` for the same options)
            explicit=options.format in OPENAI_NATIVE and bool(options.cache_breakpoint_ttls),
        )

    window = strategy_window(timeline=timeline, window=selectors.visible_window(timeline=timeline))
    decision = plan_ttl_pruning(window, now=now, last_touch=timeline.cache_last_touch_at, settings=settings)
    if not dry_run and decision.hides:
        # Hides are stored before anything reads the blocks again (a compaction); without any, the
        # cache clock is touched as the render records itself (``render_record``: one statement
        # that also locks the context's row), not in a transaction of its own.
        _persist_ttl(timeline=timeline, decision=decision, now=now)
    elif not dry_run:
        metrics.observe_ttl(status=decision.status, hidden=0)
    window_before_hides = window
    window = apply_hides(window, decision.hides)

    wanted = force_sanitize or needs_compaction(window, system_tokens=system_tokens, settings=settings)
    if not wanted and not dry_run:
        compaction_nudge(timeline=timeline, window=window, settings=settings)
    compaction: CompactionOutcome | None = None
    if wanted:
        window, compaction = _compact(
            timeline,
            window,
            settings=settings,
            system_tokens=system_tokens,
            force=force_sanitize,
            dry_run=dry_run,
            summarizer=summarizer,
            now=now,
        )
    sources = _sources(timeline) if options.include_sources else []
    active_plan = selectors.active_plan(timeline=timeline) if options.include_announce else None
    rendered = render_window(
        window,
        settings=settings,
        options=options,
        sources=sources,
        active_plan=active_plan,
        system_tokens=system_tokens,
        prefix_seed=system_digest,
    )
    applied = (
        compaction if compaction is not None and compaction.status == Compaction.Outcome.APPLIED else None
    )
    report = None
    forecast = None
    render_id = None
    if not dry_run:  # a dry run neither compares with nor becomes the previous render
        key = settings_key(settings, options)
        summary_seq = window_summary_seq(window)
        report = explain_cache(
            previous=previous,
            current=rendered.prefix,
            now=now,
            ttl_seconds=settings.cache_ttl_seconds,
            settings_key=key,
            latest_compaction_id=summary_seq,
            current_hidden=frozenset(block.seq for block in window if block.hidden),
            current_seqs=frozenset(block.seq for block in window),
        )
        forecast = render_forecast(
            timeline=timeline,
            rendered=rendered,
            format_name=options.format,
            model=model,
            head_tokens=system_tokens + tools_tokens,
            now=now,
            state=cache_state,
        )
        read_through = spread_read_through(
            request=rendered.request,
            seqs=rendered.prefix.seqs,
            marked_seqs=rendered.marked_seqs,
            read_block=forecast.forecast.read_block,
            head_tokens=system_tokens + tools_tokens,
        )
        if read_through is not None:  # GPT-5.6: a rewritten stretch's writes spread over it
            options = replace(options, cache_read_through=read_through)
            rendered = render_window(
                window,
                settings=settings,
                options=options,
                sources=sources,
                active_plan=active_plan,
                system_tokens=system_tokens,
                prefix_seed=system_digest,
            )
            forecast = render_forecast(
                timeline=timeline,
                rendered=rendered,
                format_name=options.format,
                model=model,
                head_tokens=system_tokens + tools_tokens,
                now=now,
                state=cache_state,
            )
        render_id = render_record(
            timeline=timeline,
            now=now,
            rendered=rendered,
            report=report,
            settings_key=key,
            summary_seq=summary_seq,
            pruning_status=decision.status,
            window=window,
            compaction_id=applied.compaction_id if applied is not None else None,
            inputs=render_inputs(settings=settings, options=options, system_digest=system_digest),
            forecast=forecast,
            pruned_tokens=_pruned_tokens(window_before_hides, decision),
            format_name=options.format,
            model=model,
            system_text=system_text if not tools_tokens else "",
        ).public_id
    return RenderOutcome(
        rendered=rendered,
        pruning_status=decision.status,
        hidden_paths=[hide.path for hide in decision.hides],
        compaction=applied,
        would_compact=wanted and dry_run,
        settings=settings,
        ignored_settings=resolved.ignored,
        cache=report,
        render_id=render_id,
        forecast=forecast,
    )


def _pruned_tokens(window: list[BlockValue], decision: TtlDecision) -> int:
    """Tokens TTL pruning took out of this render: the hidden blocks' cost minus their replacements'."""
    if not decision.hides:
        return 0
    tokens = {block.seq: block.effective_tokens for block in window}
    return max(0, sum(tokens.get(h.seq, 0) - h.replacement_tokens for h in decision.hides))


def _compact(
    timeline: Timeline,
    window: list[BlockValue],
    *,
    settings: RenderSettings,
    system_tokens: int,
    force: bool,
    dry_run: bool,
    summarizer: Summarizer | None,
    now: datetime,
) -> tuple[list[BlockValue], CompactionOutcome | None]:
    """Step 2 of the pipeline: the window after a compaction (a dry run previews one in memory)."""
    if dry_run:
        turn_id = selectors.timeline_current_turn_id(timeline=timeline)
        preview = _preview_compaction(
            window, settings=settings, system_tokens=system_tokens, force=force, turn_id=turn_id
        )
        return (preview if preview is not None else window), None
    # Over the hard ceiling while a background compaction runs, compaction_run waits for it
    # (bounded) and compacts itself if it must: the render never returns more than max_tokens.
    compaction = compaction_run(
        timeline=timeline,
        settings=settings,
        trigger=Compaction.Trigger.FORCED if force else Compaction.Trigger.RENDER,
        force=force,
        system_tokens=system_tokens,
        summarizer=summarizer,
        now=now,
    )
    return strategy_window(timeline=timeline, window=selectors.visible_window(timeline=timeline)), compaction


def _sources(timeline: Timeline) -> list[Source]:
    return [
        Source(sid=row.sid, url=row.url, title=row.title, text=row.text, meta=row.meta)
        for row in selectors.sources_pool(timeline=timeline)
    ]
