"""Properties of cut points and plans over random block streams (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.cutpoint import find_cut_point
from compaction.planner import plan_at_cut, plan_compaction
from tests.budget import examples
from timeline_app.domain.blocks import (
    ANNOUNCE,
    ASSISTANT_COMPLETION,
    NOTES,
    PLAN,
    PLAN_ACK,
    SOURCES_POOL,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_ATTACHMENT_META,
    USER_PROMPT,
    Block,
    is_turn_start,
)
from timeline_app.domain.settings import RenderSettings

TYPES = [
    TURN_HEADER,
    USER_PROMPT,
    USER_ATTACHMENT,
    USER_ATTACHMENT_META,
    ASSISTANT_COMPLETION,
    TOOL_CALL,
    TOOL_RESULT,
    TOOL_RESULT,
    NOTES,
    PLAN,
    PLAN_ACK,
    SOURCES_POOL,
    ANNOUNCE,
]
AUTHORS = ["", "user", "assistant", "system", "tool", "planner"]

raw_block = st.tuples(
    st.sampled_from(TYPES),
    st.sampled_from(AUTHORS),
    st.integers(0, 60),  # tokens
    st.booleans(),  # hidden
    st.integers(0, 3),  # turn-id step: 0 keeps the turn, else a new turn
)


@st.composite
def windows(draw: st.DrawFn) -> list[Block]:
    blocks: list[Block] = []
    if draw(st.booleans()):
        blocks.append(
            Block(
                seq=1,
                type=SUMMARY,
                author="system",
                tokens=draw(st.integers(0, 80)),
                meta={"covered_turn_ids": ["old"]},
            )
        )
    turn = 0
    for type_, author, tokens, hidden, step in draw(st.lists(raw_block, max_size=60)):
        if step == 3 or type_ == TURN_HEADER:
            turn += 1
        b = Block(seq=len(blocks) + 1, type=type_, author=author, turn_id=f"t{turn}", tokens=tokens)
        if hidden:
            b = b.hide(replacement_text="(hidden)", reason="ttl", replacement_tokens=min(tokens, 2))
        blocks.append(b)
    return blocks


def budgets(window: list[Block]) -> list[int]:
    total = sum(b.effective_tokens for b in window)
    return sorted({0, 1, total // 3, total // 2, total, total + 1} | set(range(0, min(total, 120) + 1, 7)))


@given(windows())
@settings(max_examples=examples(300), deadline=None)
def test_cut_is_never_a_tool_result_or_a_summary(window: list[Block]) -> None:
    for keep in budgets(window):
        cut = find_cut_point(window, keep)
        if cut is not None:
            assert window[cut].type not in (TOOL_RESULT, SUMMARY)
            assert 0 < cut < len(window)


@given(windows())
@settings(max_examples=examples(300), deadline=None)
def test_plans_partition_the_window_and_retain_the_cut_block(window: list[Block]) -> None:
    s = RenderSettings(max_tokens=1000, keep_recent_tokens=0)
    for keep in budgets(window):
        cut = find_cut_point(window, keep)
        if cut is None:
            continue
        plan = plan_at_cut(window, cut, system_tokens=0, settings=s)
        assert plan.retained[0] is window[cut]
        rest = window[1:] if window and window[0].type == SUMMARY else window
        assert [*plan.summarized, *plan.split_prefix, *plan.retained] == rest
        assert plan.split_prefix == () or plan.split_turn_id == window[cut].turn_id
        if plan.split_turn_id is not None:
            assert not is_turn_start(window[cut])
            assert all(b.turn_id == plan.split_turn_id for b in plan.split_prefix)
            assert plan.split_turn_id in plan.covered_turn_ids
        assert len(set(plan.covered_turn_ids)) == len(plan.covered_turn_ids)


@given(windows(), st.integers(1, 40), st.integers(0, 300))
@settings(max_examples=examples(300), deadline=None)
def test_plan_fits_the_limit_whenever_some_cut_does(window: list[Block], limit_pct: int, system: int) -> None:
    s = RenderSettings(
        max_tokens=1000,
        threshold=limit_pct / 100,
        keep_recent_tokens=250,
        summary_max_tokens=60,
        split_prefix_max_tokens=30,
    )
    plan = plan_compaction(window, system_tokens=system, settings=s, force=True)
    cuts = {find_cut_point(window, k) for k in range(0, 251)} - {None}
    if not cuts:
        assert plan is None
        return
    assert plan is not None
    estimates = [
        plan_at_cut(window, c, system_tokens=system, settings=s).estimated_tokens
        for c in cuts
        if c is not None
    ]
    if min(estimates) <= s.compaction_limit:
        assert plan.estimated_tokens <= s.compaction_limit
    else:
        assert plan.estimated_tokens == min(estimates)
    assert window[plan.cut_index].type not in (TOOL_RESULT, SUMMARY)


def reference_cut(window: list[Block], keep: int) -> int | None:
    """The seed's rules written as the plain backward walk, for comparison."""
    from compaction.cutpoint import is_cut_point_block, is_message_block

    start = 1 if window and window[0].type == SUMMARY else 0
    acc, idx = 0, None
    for i in range(len(window) - 1, start - 1, -1):
        if is_message_block(window[i]):
            acc += window[i].effective_tokens
            if acc >= keep:
                idx = i
                break
    if idx is None:
        return None
    after = [i for i in range(idx, len(window)) if is_cut_point_block(window[i])]
    before = [i for i in range(start, idx) if is_cut_point_block(window[i])]
    if after:
        cut = after[0]
    elif before:
        cut = before[-1]
    else:
        return None
    while cut > start and not is_message_block(window[cut - 1]) and window[cut - 1].type != SUMMARY:
        cut -= 1
    if (
        cut - 1 >= start
        and window[cut].type != TURN_HEADER
        and is_turn_start(window[cut])
        and window[cut - 1].type == TURN_HEADER
        and window[cut - 1].turn_id == window[cut].turn_id
    ):
        cut -= 1
    return cut if cut > start else None


@given(windows())
@settings(max_examples=examples(300), deadline=None)
def test_indexed_cut_matches_the_plain_backward_walk(window: list[Block]) -> None:
    for keep in budgets(window):
        assert find_cut_point(window, keep) == reference_cut(window, keep)
