"""Engine speed: cut-point planning, render versus a plain fetch, extractive summaries."""

from __future__ import annotations

from collections.abc import Callable

from compaction.planner import plan_compaction
from compaction.summary import ExtractiveSummarizer
from timeline_app import selectors, tenancy
from timeline_app.domain import blocks as b
from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.models import Block as BlockRow
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.render import timeline_render
from timeline_bench import render as render_at_scale
from timeline_bench.common import (
    fill_timeline,
    median_seconds,
    row_level_security,
    scratch_tenant,
    scratch_timeline,
    synthetic_turn,
)
from timeline_bench.identifiers import identifier_share


def synthetic_values(count: int, *, result_words: int = 60) -> list[Block]:
    """``count`` block values of the benchmark's synthetic turns, without the database; tokens are
    estimated from the text length (tokenizing 100,000 blocks would dominate the setup)."""
    values: list[Block] = []
    turn = 0
    while len(values) < count:
        for new in synthetic_turn(turn, result_chars=result_words * 8):
            values.append(
                Block(
                    seq=len(values) + 1,
                    type=new.type,
                    author=new.author,
                    turn_id=new.turn_id or "",
                    text=new.text,
                    meta=new.meta,
                    tokens=10 + len(new.text) // 4,
                )
            )
        turn += 1
    return values[:count]


def one_long_turn(count: int, *, first_seq: int) -> list[Block]:
    """``count`` blocks of a single turn: header, prompt, then tool rounds (call, result)."""
    turn_id = "turn_long"
    values = [
        Block(seq=first_seq, type=b.TURN_HEADER, turn_id=turn_id, author="system", tokens=10),
        Block(
            seq=first_seq + 1,
            type=b.USER_PROMPT,
            turn_id=turn_id,
            author="user",
            text="Do it all.",
            tokens=10,
        ),
    ]
    call = 0
    while len(values) < count:
        meta = {"tool_call_id": f"tc_long_{call}", "tool_id": "web"}
        for kind, text in ((b.TOOL_CALL, "{}"), (b.TOOL_RESULT, "result " * 60)):
            values.append(
                Block(
                    seq=first_seq + len(values),
                    type=kind,
                    turn_id=turn_id,
                    text=text,
                    meta=meta,
                    tokens=10 + len(text) // 4,
                )
            )
        call += 1
    return values[:count]


def run(write: Callable[[str], None]) -> None:
    write("engine: medians of repeated runs, all measured now")
    write(f"  {row_level_security()}; renders timed under one tenant's setting, as the API runs them")

    values = synthetic_values(100_000)
    settings = RenderSettings(max_tokens=200_000)
    plan_s = median_seconds(
        lambda: plan_compaction(values, system_tokens=0, settings=settings), repeat=5, warmup=1
    )
    write(f"  cut-point planning over 100,000 blocks: {plan_s * 1000:8.1f} ms  (goal: well under 1 s)")
    # The hard path: the newest half is one turn of tool rounds, so the keep-recent boundary lands
    # inside a turn, on tool results, and the cut backs up to a valid block (a split turn).
    long_turn = [*values[:50_000], *one_long_turn(50_000, first_seq=50_001)]
    split_plan = plan_compaction(long_turn, system_tokens=0, settings=settings)
    assert split_plan is not None and split_plan.is_split, "the benchmark window must split a turn"
    split_s = median_seconds(
        lambda: plan_compaction(long_turn, system_tokens=0, settings=settings), repeat=5, warmup=1
    )
    write(
        f"  the same over a window whose cut backs up inside one long turn (split): {split_s * 1000:8.1f} ms"
    )

    history = synthetic_values(7_000, result_words=100)
    while sum(v.tokens for v in history) < 1_000_000:
        history = synthetic_values(len(history) + 500, result_words=100)
    estimated = sum(v.tokens for v in history)
    # The synthetic blocks carry estimated token counts (tokenizing all of them would dominate the
    # setup); the real count is measured once here, so the label says both.
    counted = sum(count_text_tokens(block_text(v)) for v in history)
    summarizer = ExtractiveSummarizer()
    summary_s = median_seconds(
        lambda: summarizer.summarize(
            blocks=history, previous_summary=None, max_tokens=800, purpose="history"
        ),
        repeat=3,
        warmup=1,
    )
    write(
        f"  extractive summary of {len(history):,} blocks ({counted / 1e6:.2f}M tokens by tiktoken; "
        f"{estimated / 1e6:.2f}M by the synthetic estimate): {summary_s * 1000:8.1f} ms"
    )
    kept = identifier_share()
    write(
        f"  identifiers visible in the render after an extractive compaction: {len(kept.visible)}/"
        f"{len(kept.planted)} ({kept.share:.0%}; goal: at least 95%), summary {kept.summary_tokens}/"
        f"{kept.summary_max_tokens} tokens"
    )

    stored_renders(write)
    render_at_scale.run(write)


def stored_renders(write: Callable[[str], None], *, blocks: int = 10_000) -> None:
    """A render of a stored timeline against a plain fetch of its rows, then the same once compacted."""
    # Under the scratch tenant's own setting, as an API request runs (row-level security: the
    # command itself widens to every tenant).
    with scratch_tenant() as tenant, tenancy.tenant_scope(tenant.pk):
        timeline = scratch_timeline(tenant)
        conversation = timeline.conversation
        conversation.settings = {"max_tokens": 10_000_000}
        conversation.save()
        fill_timeline(timeline, blocks=blocks)
        options = RenderOptions(format="anthropic")

        def fetch() -> None:
            list(BlockRow.objects.filter(timeline=timeline).order_by("seq"))

        def render() -> None:
            timeline.refresh_from_db()
            timeline_render(timeline=timeline, options=options)

        fetch_s = median_seconds(fetch, repeat=7, warmup=1)
        render_s = median_seconds(render, repeat=7, warmup=1)
        # The same 10,000 stored blocks once compacted: a render reads only the visible window.
        conversation.settings = {"max_tokens": 200_000}
        conversation.save()
        timeline.conversation.refresh_from_db()
        render()
        first_retained = selectors.visible_window(timeline=timeline)[1].seq

        def fetch_window() -> None:
            list(BlockRow.objects.filter(timeline=timeline, seq__gte=first_retained).order_by("seq"))

        window_fetch_s = median_seconds(fetch_window, repeat=7, warmup=1)
        compacted_s = median_seconds(render, repeat=7, warmup=1)
    write(f"  plain fetch of a {blocks:,}-block timeline:  {fetch_s * 1000:8.1f} ms")
    write(
        f"  render of all of it (no compaction):     {render_s * 1000:8.1f} ms  ({render_s / fetch_s:.2f}x the fetch)"
    )
    write(f"  once compacted, plain fetch of the window rows: {window_fetch_s * 1000:8.1f} ms")
    write(
        f"  once compacted, render (reads the window only): {compacted_s * 1000:8.1f} ms"
        f"  ({compacted_s / window_fetch_s:.2f}x the window fetch, {compacted_s / fetch_s:.2f}x the full fetch)"
    )
