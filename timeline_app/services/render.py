"""The render pipeline in the shell (seed 002 "Render Pipeline Order", DESIGN §4).

1. TTL pruning (hides persisted, cache clock touched) → 2. compaction when over
``threshold × max_tokens`` or forced → 3. slice from the latest summary (the selector's visible
window) → 4. hidden blocks as replacement text → 5. cache points → 6. tail. Steps 3–6 are the pure
``render_window``; this module only loads, persists and calls.

``timeline_render`` (the API's) and ``timeline_render_preview`` (the admin's, persisting nothing)
share the window step (``_window``: strategy and TTL plan), the compaction trigger and the render
step; only the render persists the pruning, compacts, and records itself (``_recorded``). The
request's system prompt, tools and model come as one ``RequestHead`` (``rendering.request_head``).
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

from compaction.planner import needs_compaction, plan_compaction, visible_tokens
from compaction.summary import Summarizer
from timeline_app import metrics, selectors
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.blocks import window_summary_seq
from timeline_app.domain.operations import TTL_PRUNED
from timeline_app.domain.settings import RenderSettings
from timeline_app.errors import ConversationErased
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.formats import Source
from timeline_app.rendering.pipeline import Rendered, RenderOptions, render_window
from timeline_app.rendering.prefix import CacheReport, PreviousRender, explain_cache
from timeline_app.rendering.recorded_inputs import render_inputs
from timeline_app.rendering.request_head import RequestHead
from timeline_app.rendering.ttl import TtlDecision, apply_hides, plan_ttl_pruning
from timeline_app.rendering.usage.forecast import CacheState
from timeline_app.rendering.usage.requests import format_provider, spread_read_through
from timeline_app.selectors.contexts import strategy_window
from timeline_app.selectors.settings import ResolvedSettings, timeline_settings_resolved
from timeline_app.services.compaction import (
    CompactionOutcome,
    compaction_nudge,
    compaction_run,
    draft_summary,
    fallback_summarizer,
)
from timeline_app.services.hiding import hides_store
from timeline_app.services.model_lifecycle import warn_if_retired
from timeline_app.services.operations import operation_record
from timeline_app.services.render_history import render_record
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
    # The render record's public id and the usage forecast (None for a preview).
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


def _persist_ttl(*, timeline: Timeline, window: _Window, now: datetime) -> None:
    """Store the window step's TTL hides, touch the cache clock and log the prune, in one
    transaction of its own (the hides stand even if the render fails later)."""
    decision = window.decision
    with transaction.atomic(durable=True):
        # The context's row first, then its blocks: the order an erase takes them in (after the
        # conversation's row), so the two never deadlock. Erased meanwhile: nothing to update.
        if not Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=now):
            raise ConversationErased("the conversation was erased", details={"conversation": "erased"})
        hides_store(timeline=timeline, hides=decision.hides)
        before = visible_tokens(window.unpruned)
        hides = decision.hides
        operation_record(
            timeline=timeline, kind=TTL_PRUNED, now=now, tokens_before=before,
            tokens_after=before - window.pruned_tokens,
            seqs=[h.seq for h in hides], paths=[h.path for h in hides],
        )  # fmt: skip
    timeline.cache_last_touch_at = now
    metrics.observe_ttl(status=decision.status, hidden=len(decision.hides))


def _preview_compaction(
    window: list[BlockValue], *, settings: RenderSettings, system_tokens: int, force: bool, turn_id: str
) -> list[BlockValue] | None:
    """The window a compaction would leave, with an in-memory extractive summary (previews)."""
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


NO_HEAD = RequestHead()
"""A service call that names no request head: no system prompt, no tools, no model, no digest."""


@collector_paused()
def timeline_render(
    *,
    timeline: Timeline,
    options: RenderOptions,
    head: RequestHead = NO_HEAD,
    now: datetime | None = None,
    max_tokens: int | None = None,
    force_sanitize: bool = False,
    summarizer: Summarizer | None = None,
) -> RenderOutcome:
    """Render the timeline for one model call: prune (persisted), compact when due, render, and
    record the render with its cache explanation and its usage forecast.

    ``head`` (``rendering.request_head``): the request's system prompt, tool definitions and model.
    Its digest seeds the cache fingerprint, its tokens count in the budget and the forecast (for
    ``head.model``), and the record keeps its system text when no tools precede it, so a compaction
    can start its summary request with this render's prefix while it is cached."""
    call = _call(timeline=timeline, options=options, head=head, max_tokens=max_tokens, now=now)
    memory = _memory(call)
    window = _window(call)
    if window.decision.hides:
        # Hides are stored before anything reads the blocks again (a compaction); without any, the
        # cache clock is touched as the render records itself (``render_record``: one statement
        # that also locks the context's row), not in a transaction of its own.
        _persist_ttl(timeline=timeline, window=window, now=call.now)
    else:
        metrics.observe_ttl(status=window.decision.status, hidden=0)
    blocks = window.blocks
    compaction: CompactionOutcome | None = None
    if _wants_compaction(call, blocks, force=force_sanitize):
        # Over the hard ceiling while a background compaction runs, compaction_run waits for it
        # (bounded) and compacts itself if it must: the render never returns more than max_tokens.
        compaction = compaction_run(
            timeline=timeline,
            settings=call.settings,
            trigger=Compaction.Trigger.FORCED if force_sanitize else Compaction.Trigger.RENDER,
            force=force_sanitize,
            system_tokens=head.system_tokens,
            summarizer=summarizer,
            now=call.now,
        )
        blocks = strategy_window(timeline=timeline, window=selectors.visible_window(timeline=timeline))
    else:
        compaction_nudge(timeline=timeline, window=blocks, settings=call.settings)
    applied = (
        compaction if compaction is not None and compaction.status == Compaction.Outcome.APPLIED else None
    )
    return _recorded(
        call,
        rendered=_rendered(call, blocks),
        window=window,
        blocks=blocks,
        compaction=applied,
        memory=memory,
    )


@collector_paused()
def timeline_render_preview(
    *,
    timeline: Timeline,
    options: RenderOptions,
    head: RequestHead = NO_HEAD,
    now: datetime | None = None,
    max_tokens: int | None = None,
    force: bool = False,
) -> RenderOutcome:
    """What ``timeline_render`` would return now, persisting nothing (the admin's preview): the
    pruning due is applied in memory, and a compaction due (or ``force``) is previewed with an
    in-memory extractive summary (``would_compact``). A preview neither compares with nor becomes
    the previous render: no cache report, no forecast, no record."""
    call = _call(timeline=timeline, options=options, head=head, max_tokens=max_tokens, now=now)
    window = _window(call)
    blocks = window.blocks
    wanted = _wants_compaction(call, blocks, force=force)
    if wanted:
        preview = _preview_compaction(
            blocks,
            settings=call.settings,
            system_tokens=head.system_tokens,
            force=force,
            turn_id=selectors.timeline_current_turn_id(timeline=timeline),
        )
        blocks = preview if preview is not None else blocks
    return RenderOutcome(
        rendered=_rendered(call, blocks),
        pruning_status=window.decision.status,
        hidden_paths=window.hidden_paths,
        would_compact=wanted,
        settings=call.settings,
        ignored_settings=call.resolved.ignored,
    )


# ---------------------------------------------------------------- the steps both share


@dataclass(frozen=True)
class _Call:
    """One render's inputs once resolved: what every step reads."""

    timeline: Timeline
    options: RenderOptions
    head: RequestHead
    resolved: ResolvedSettings
    now: datetime

    @property
    def settings(self) -> RenderSettings:
        return self.resolved.settings


def _call(
    *,
    timeline: Timeline,
    options: RenderOptions,
    head: RequestHead,
    max_tokens: int | None,
    now: datetime | None,
) -> _Call:
    if head.model:
        warn_if_retired(head.model, where="render model")
    if options.format in OPENAI_NATIVE and not options.cache_breakpoint_ttls:
        options = replace(options, cache_breakpoint_ttls=cache_breakpoint_ttls(head.model))
    resolved = timeline_settings_resolved(timeline=timeline, max_tokens=max_tokens)
    return _Call(timeline=timeline, options=options, head=head, resolved=resolved, now=now or timezone.now())


@dataclass(frozen=True)
class _Window:
    """The window step's answer: the strategy's window, the TTL pruning due on it, and the window
    with those hides applied (in memory: persisting them is the render's, not the preview's)."""

    unpruned: list[BlockValue]
    decision: TtlDecision
    blocks: list[BlockValue]

    @property
    def hidden_paths(self) -> list[str]:
        return [hide.path for hide in self.decision.hides]

    @property
    def pruned_tokens(self) -> int:
        """Tokens TTL pruning took out: the hidden blocks' cost minus their replacements'."""
        if not self.decision.hides:
            return 0
        tokens = {block.seq: block.effective_tokens for block in self.unpruned}
        return max(0, sum(tokens.get(h.seq, 0) - h.replacement_tokens for h in self.decision.hides))


def _window(call: _Call) -> _Window:
    """Steps 1 and 3: the visible window (from the latest summary) as the context's strategy shapes
    it, and the TTL pruning planned on it."""
    timeline = call.timeline
    window = strategy_window(timeline=timeline, window=selectors.visible_window(timeline=timeline))
    decision = plan_ttl_pruning(
        window, now=call.now, last_touch=timeline.cache_last_touch_at, settings=call.settings
    )
    return _Window(unpruned=window, decision=decision, blocks=apply_hides(window, decision.hides))


def _wants_compaction(call: _Call, window: list[BlockValue], *, force: bool) -> bool:
    """Step 2's trigger: forced, or the window over ``threshold × max_tokens`` with the system prompt."""
    return force or needs_compaction(window, system_tokens=call.head.system_tokens, settings=call.settings)


def _rendered(call: _Call, window: list[BlockValue]) -> Rendered:
    """Steps 4 to 6 (the pure ``render_window``), with the tail the options ask for."""
    options, timeline = call.options, call.timeline
    return render_window(
        window,
        settings=call.settings,
        options=options,
        sources=_sources(timeline) if options.include_sources else [],
        active_plan=selectors.active_plan(timeline=timeline) if options.include_announce else None,
        system_tokens=call.head.system_tokens,
        prefix_seed=call.head.digest,
    )


# ---------------------------------------------------------------- the render's record


def _memory(call: _Call) -> tuple[PreviousRender | None, CacheState]:
    """The previous render and the forecast's cache, in one read."""
    options = call.options
    provider = format_provider(options.format)
    return selectors.render_memory(
        timeline=call.timeline,
        provider=provider,
        now=call.now,
        retention_seconds=cache_rules().retention_seconds(provider),
        # GPT-5.6 breakpoints: the forecast reads written entries (``render_forecast``'s
        # ``request.explicit`` for the same options)
        explicit=options.format in OPENAI_NATIVE and bool(options.cache_breakpoint_ttls),
    )


def _forecast(call: _Call, rendered: Rendered, cache_state: CacheState) -> RenderForecast:
    return render_forecast(
        timeline=call.timeline,
        rendered=rendered,
        format_name=call.options.format,
        model=call.head.model,
        head_tokens=call.head.tokens,
        now=call.now,
        state=cache_state,
    )


def _recorded(
    call: _Call,
    *,
    rendered: Rendered,
    window: _Window,
    blocks: list[BlockValue],
    compaction: CompactionOutcome | None,
    memory: tuple[PreviousRender | None, CacheState],
) -> RenderOutcome:
    """The render compared with the previous one (the cache report), forecast, and recorded."""
    settings, options, head, now = call.settings, call.options, call.head, call.now
    previous, cache_state = memory
    key = settings_key(settings, options)
    summary_seq = window_summary_seq(blocks)
    report = explain_cache(
        previous=previous,
        current=rendered.prefix,
        now=now,
        ttl_seconds=settings.cache_ttl_seconds,
        settings_key=key,
        latest_compaction_id=summary_seq,
        current_hidden=frozenset(block.seq for block in blocks if block.hidden),
        current_seqs=frozenset(block.seq for block in blocks),
    )
    forecast = _forecast(call, rendered, cache_state)
    read_through = spread_read_through(
        request=rendered.request,
        seqs=rendered.prefix.seqs,
        marked_seqs=rendered.marked_seqs,
        read_block=forecast.forecast.read_block,
        head_tokens=head.tokens,
    )
    if read_through is not None:  # GPT-5.6: a rewritten stretch's writes spread over it
        call = replace(call, options=replace(options, cache_read_through=read_through))
        options = call.options
        rendered = _rendered(call, blocks)
        forecast = _forecast(call, rendered, cache_state)
    record = render_record(
        timeline=call.timeline,
        now=now,
        rendered=rendered,
        report=report,
        settings_key=key,
        summary_seq=summary_seq,
        pruning_status=window.decision.status,
        window=blocks,
        compaction_id=compaction.compaction_id if compaction is not None else None,
        inputs=render_inputs(settings=settings, options=options, system_digest=head.digest),
        forecast=forecast,
        pruned_tokens=window.pruned_tokens,
        format_name=options.format,
        model=head.model,
        system_text=head.resendable_system_text,
    )
    return RenderOutcome(
        rendered=rendered,
        pruning_status=window.decision.status,
        hidden_paths=window.hidden_paths,
        compaction=compaction,
        settings=settings,
        ignored_settings=call.resolved.ignored,
        cache=report,
        render_id=record.public_id,
        forecast=forecast,
    )


def _sources(timeline: Timeline) -> list[Source]:
    return [
        Source(sid=row.sid, url=row.url, title=row.title, text=row.text, meta=row.meta)
        for row in selectors.sources_pool(timeline=timeline)
    ]
