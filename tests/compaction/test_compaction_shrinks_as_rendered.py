"""Property: a compaction is accepted only when the context as rendered shrinks, and its
``after_tokens`` is exactly what the next render shows (``tokens.visible``, the ``(continued)``
header of a split cut and the summary's header and path lines included) — over random timelines,
finished or waiting for a tool result, compacted once or again on top of an earlier summary."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.planner import compaction_result, plan_compaction
from compaction.summary.block import build_summary_block
from tests.budget import examples
from tests.builders import Stream
from timeline_app.domain.blocks import TOOL_CALL, Block, tool_call_path
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.pipeline import RenderOptions, render_window

TURN = st.tuples(st.integers(0, 5), st.integers(1, 150), st.integers(1, 60))


def shown(window: list[Block], config: RenderSettings) -> int:
    return render_window(window, settings=config, options=RenderOptions()).tokens["visible"]


@settings(max_examples=examples(150), deadline=None)
@given(
    turns=st.lists(TURN, min_size=1, max_size=7),
    pending=st.booleans(),
    keep=st.integers(0, 800),
    summary_words=st.lists(st.integers(1, 120), min_size=1, max_size=3),
)
def test_every_accepted_compaction_renders_to_its_after_tokens(turns, pending, keep, summary_words):
    stream = Stream()
    for number, (calls, result_tokens, completion_tokens) in enumerate(turns, start=1):
        last = number == len(turns)
        stream.sized_turn(
            f"t{number}",
            calls=calls,
            result_tokens=result_tokens,
            completion_tokens=completion_tokens,
            completion=not (last and pending),
        )
    if pending:  # the current turn waits for a tool result
        turn_id = f"t{len(turns)}"
        stream.add(TOOL_CALL, tokens=7, turn_id=turn_id, path=tool_call_path(turn_id, "tc_pending"))
    config = RenderSettings(max_tokens=100_000, keep_recent_tokens=keep)
    window = list(stream.blocks)
    next_seq = len(window) + 1
    for words in summary_words:  # compact, then again on top of the summary
        plan = plan_compaction(window, system_tokens=0, settings=config, force=True)
        if plan is None:
            return
        assert plan.before_tokens == shown(window, config)
        fields = build_summary_block(
            plan,
            summary_text=" ".join(["gist"] * words),
            split_text="the turn so far" if plan.is_split else None,
            digest={},
            turn_id=f"t{len(turns)}",
        )
        summary = Block(seq=next_seq, **fields)
        summary = replace(summary, tokens=block_tokens(summary))
        next_seq += 1
        result = compaction_result(plan, summary=summary, retained_tokens=plan.retained_tokens)
        after_window = [summary, *plan.retained]
        if not result.accepted:
            assert shown(after_window, config) == result.after_tokens >= result.before_tokens
            return
        assert shown(after_window, config) == result.after_tokens < result.before_tokens
        window = after_window
