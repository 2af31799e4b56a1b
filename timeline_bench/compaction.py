"""How long a render takes when background compaction kept the timeline under the soft threshold,
versus when the render has to compact by itself (DESIGN §6: agents rarely wait on a summary).

Both cases render a timeline the agent just pushed past the render's threshold (0.9 ×
max_tokens) — or would have, had the beat sweep's background compaction (soft threshold) not run
first. The inline case is measured with the extractive summarizer (the shell's own cost) and with
a summarizer that takes a fixed time, standing in for an LLM call.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings

from compaction.summary import ExtractiveSummarizer, Summarizer
from timeline_app import selectors
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.blocks import blocks_append
from timeline_app.services.compaction import timeline_compact
from timeline_app.services.render import timeline_render
from timeline_bench.common import scratch_tenant, scratch_timeline, synthetic_turn

MAX_TOKENS = 20_000
SAMPLES = 7
LLM_SECONDS = 0.25


class FixedLatencySummarizer:
    """Extractive summaries after a fixed delay: what an LLM call adds to an inline compaction."""

    name = "fixed-latency"
    model = "simulated"

    def __init__(self, seconds: float):
        self.seconds = seconds

    def summarize(self, **kwargs: Any) -> str:
        time.sleep(self.seconds)
        return ExtractiveSummarizer().summarize(**kwargs)


def _timeline(tenant: Tenant) -> Timeline:
    timeline = scratch_timeline(tenant)
    Conversation.objects.filter(pk=timeline.conversation_id).update(settings={"max_tokens": MAX_TOKENS})
    return Timeline.objects.select_related("conversation").get(pk=timeline.pk)


def _fill_past(timeline: Timeline, tokens: int, *, first_turn: int = 0) -> int:
    """Append synthetic turns until the visible tokens pass ``tokens``; returns the next turn number."""
    turn = first_turn
    while selectors.timeline_window(timeline=timeline).visible_tokens <= tokens:
        batch: list[NewBlock] = []
        for _ in range(5):
            batch += synthetic_turn(turn)
            turn += 1
        blocks_append(timeline=timeline, blocks=batch)
    return turn


def _render_seconds(timeline: Timeline, summarizer: Summarizer | None = None) -> tuple[float, bool]:
    started = time.perf_counter()
    outcome = timeline_render(timeline=timeline, options=RenderOptions(), summarizer=summarizer)
    elapsed = time.perf_counter() - started
    assert outcome.rendered.tokens["total"] <= MAX_TOKENS
    return elapsed, outcome.compaction is not None


def _kept_under_by_background(tenant: Tenant) -> tuple[float, bool]:
    timeline = _timeline(tenant)
    soft = settings.TIMELINE_SOFT_THRESHOLD
    turn = _fill_past(timeline, int((soft + 0.01) * MAX_TOKENS))
    # What the beat sweep's task does off the render path, before the agent's next turn.
    outcome = timeline_compact(timeline_id=timeline.pk, trigger=Compaction.Trigger.BACKGROUND)
    assert outcome.status == "applied", outcome
    blocks_append(timeline=timeline, blocks=synthetic_turn(turn))
    return _render_seconds(timeline)


def _compacts_by_itself(tenant: Tenant, summarizer: Summarizer) -> tuple[float, bool]:
    timeline = _timeline(tenant)
    _fill_past(timeline, int(0.9 * MAX_TOKENS))
    return _render_seconds(timeline, summarizer)


def _median_ms(samples: Sequence[tuple[float, bool]], *, compacted: bool) -> float:
    assert all(did == compacted for _, did in samples), "a render compacted (or not) unexpectedly"
    return statistics.median(seconds for seconds, _ in samples) * 1000


def run(write: Callable[[str], None], *, samples: int = SAMPLES, llm_seconds: float = LLM_SECONDS) -> None:
    with scratch_tenant() as tenant:
        background = [_kept_under_by_background(tenant) for _ in range(samples)]
        inline = [_compacts_by_itself(tenant, ExtractiveSummarizer()) for _ in range(samples)]
        inline_llm = [
            _compacts_by_itself(tenant, FixedLatencySummarizer(llm_seconds)) for _ in range(samples)
        ]
    kept = _median_ms(background, compacted=False)
    itself = _median_ms(inline, compacted=True)
    itself_llm = _median_ms(inline_llm, compacted=True)
    soft = settings.TIMELINE_SOFT_THRESHOLD
    rows = [
        (f"background compaction kept it under the soft threshold ({soft:g})", kept, ""),
        ("the render compacts by itself, extractive summary", itself, f"  (x{itself / kept:.1f})"),
        (
            f"the render compacts by itself, {llm_seconds * 1000:.0f} ms summary (LLM stand-in)",
            itself_llm,
            f"  (x{itself_llm / kept:.1f})",
        ),
    ]
    width = max(len(label) for label, _, _ in rows) + 1
    write(
        f"compaction: time a render takes at max_tokens {MAX_TOKENS:,} (median of {samples}, same run, same database)"
    )
    for label, ms, ratio in rows:
        write(f"  {label + ':':<{width}} {ms:9.1f} ms{ratio}")
