"""A thinking block (``react.thinking``) is never a cut point, and no cut separates it from the
rest of its assistant message (its text and its ``tool_use``): Anthropic rejects a last assistant
message whose ``tool_use`` lost the thinking block before it. Nor is it summarized into text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.cutpoint import find_cut_point, is_cut_point_block
from compaction.planner import plan_at_cut, plan_compaction
from tests.budget import examples
from tests.compaction.test_cut_point_properties import TYPES, budgets
from timeline_app.domain.blocks import (
    NOTES,
    SUMMARY,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
    Block,
    is_turn_start,
)
from timeline_app.domain.settings import RenderSettings

raw_block = st.tuples(
    st.sampled_from([*TYPES, THINKING, THINKING, THINKING]),
    st.sampled_from(["", "assistant", "react", "system", "tool", "user"]),
    st.integers(0, 60),
    st.integers(0, 3),
)


@st.composite
def windows(draw: st.DrawFn) -> list[Block]:
    blocks: list[Block] = []
    if draw(st.booleans()):
        blocks.append(
            Block(seq=1, type=SUMMARY, author="system", tokens=30, meta={"covered_turn_ids": ["old"]})
        )
    turn = 0
    for type_, author, tokens, step in draw(st.lists(raw_block, max_size=60)):
        if step == 3 or type_ == TURN_HEADER:
            turn += 1
        if type_ == THINKING and author == "user":
            author = "assistant"  # the write paths refuse a user-authored thinking block
        blocks.append(
            Block(seq=len(blocks) + 1, type=type_, author=author, turn_id=f"t{turn}", tokens=tokens)
        )
    return blocks


def _separated(window: list[Block], cut: int) -> bool:
    """Is a thinking block before ``cut`` in the same assistant run as the block at ``cut`` (no
    tool result, turn start or summary between them)? Then the cut splits its message."""
    if _breaks_run(window[cut]):
        return False
    for i in range(cut - 1, -1, -1):
        block = window[i]
        if block.type == THINKING:
            return True
        if _breaks_run(block):
            return False
    return False


def _breaks_run(block: Block) -> bool:
    return block.type in (TOOL_RESULT, SUMMARY) or is_turn_start(block)


@settings(max_examples=examples(1500), deadline=None, database=None)
@given(windows())
def test_no_cut_separates_a_thinking_block_from_its_assistant_message(window):
    for keep in budgets(window):
        cut = find_cut_point(window, keep)
        if cut is None:
            continue
        assert not _separated(window, cut), (keep, cut, [(b.type, b.author) for b in window])
        if window[cut].type == THINKING:
            # Only ever moved back onto it, to keep it with what follows it.
            assert not is_cut_point_block(window[cut])


@settings(max_examples=examples(500), deadline=None, database=None)
@given(windows())
def test_the_planner_never_hands_a_thinking_block_to_the_summarizer(window):
    plan = plan_compaction(
        window, system_tokens=0, settings=RenderSettings(max_tokens=200, keep_recent_tokens=60), force=True
    )
    if plan is None:
        return
    assert all(block.type != THINKING for block in plan.history_inputs + plan.split_inputs)
    compacted = {block.seq for block in plan.compacted}
    thinking = {block.seq for block in plan.compacted if block.type == THINKING}
    assert thinking <= compacted, "removed with its turn all the same"


def _turn() -> list[Block]:
    return [
        Block(seq=1, type=TURN_HEADER, author="system", turn_id="t1", tokens=5),
        Block(seq=2, type=USER_PROMPT, author="user", turn_id="t1", tokens=5),
        Block(seq=3, type=THINKING, author="assistant", turn_id="t1", tokens=50),
        Block(seq=4, type=NOTES, author="react", turn_id="t1", tokens=5),
        Block(seq=5, type=TOOL_CALL, author="react", turn_id="t1", tokens=5, meta={"tool_call_id": "tc_1"}),
        Block(
            seq=6, type=TOOL_RESULT, author="tool", turn_id="t1", tokens=500, meta={"tool_call_id": "tc_1"}
        ),
        Block(seq=7, type=THINKING, author="assistant", turn_id="t1", tokens=50),
        Block(seq=8, type=TOOL_CALL, author="react", turn_id="t1", tokens=5, meta={"tool_call_id": "tc_2"}),
        Block(seq=9, type=TOOL_RESULT, author="tool", turn_id="t1", tokens=40, meta={"tool_call_id": "tc_2"}),
    ]


def test_a_cut_on_the_call_after_a_thinking_block_moves_back_onto_the_thinking_block():
    window = _turn()
    # 40 + 5 tokens: the walk stops on the call of tc_2, whose thinking block is just before it.
    cut = find_cut_point(window, 45)
    assert cut == 6 and window[cut].seq == 7
    # The notes of tc_1 are a candidate after its thinking block: the cut moves onto the thinking.
    assert find_cut_point(window, 600) == 2


def test_a_split_plan_removes_the_thinking_block_with_its_round_and_summarizes_around_it():
    window = _turn()
    plan = plan_at_cut(window, 6, system_tokens=0, settings=RenderSettings())
    assert [b.seq for b in plan.compacted] == [1, 2, 3, 4, 5, 6]
    assert [b.seq for b in plan.history_inputs + plan.split_inputs] == [1, 2, 4, 5, 6]
    assert plan.retained[0].type == THINKING and plan.retained[1].type == TOOL_CALL
