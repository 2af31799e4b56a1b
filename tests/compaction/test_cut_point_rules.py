"""Seed 002 "Exact Cut-Point Rules", one rule at a time."""

from __future__ import annotations

import pytest

from compaction.cutpoint import find_cut_point, is_cut_point_block, is_message_block
from tests.builders import Stream
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    SOURCES_POOL,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
    is_turn_start,
)


def block(type_: str, author: str = "", **kw: object) -> Block:
    return Block(seq=1, type=type_, author=author, **kw)  # type: ignore[arg-type]


# --- rule 1: candidates -------------------------------------------------------------------


@pytest.mark.parametrize("author", ["", "user", "assistant", "system", "tool", "planner"])
def test_tool_results_and_summaries_are_never_candidates_whatever_the_author(author: str) -> None:
    assert not is_cut_point_block(block(TOOL_RESULT, author))
    assert not is_cut_point_block(block(SUMMARY, author))


@pytest.mark.parametrize("type_", [USER_PROMPT, ASSISTANT_COMPLETION, TOOL_CALL, TURN_HEADER])
@pytest.mark.parametrize("author", ["", "system", "tool"])
def test_prompt_completion_tool_call_and_header_are_candidates_by_type(type_: str, author: str) -> None:
    assert is_cut_point_block(block(type_, author))


@pytest.mark.parametrize("author", ["user", "assistant"])
def test_any_block_by_user_or_assistant_is_a_candidate(author: str) -> None:
    assert is_cut_point_block(block(USER_ATTACHMENT, author))
    assert is_cut_point_block(block("custom.thing", author))


def test_any_other_present_author_is_a_candidate() -> None:
    assert is_cut_point_block(block(NOTES, "planner"))


@pytest.mark.parametrize("author", ["", "system", "tool"])
def test_blocks_without_author_or_by_system_or_tool_are_not_candidates(author: str) -> None:
    assert not is_cut_point_block(block(NOTES, author))
    assert not is_cut_point_block(block(SOURCES_POOL, author))


# --- rule 2: message blocks ---------------------------------------------------------------


def test_tool_results_count_as_message_blocks() -> None:
    assert is_message_block(block(TOOL_RESULT, "tool"))
    assert is_message_block(block(TOOL_RESULT))


def test_message_blocks_are_otherwise_the_candidates() -> None:
    for b in [block(USER_PROMPT), block(NOTES, "assistant"), block(NOTES, "planner")]:
        assert is_message_block(b)
    for b in [block(NOTES, "system"), block(NOTES), block(SUMMARY, "system")]:
        assert not is_message_block(b)


# --- rule 4: turn starts ------------------------------------------------------------------


def test_turn_starts_are_header_prompt_or_user_authored() -> None:
    assert is_turn_start(block(TURN_HEADER, "system"))
    assert is_turn_start(block(USER_PROMPT))
    assert is_turn_start(block(USER_ATTACHMENT, "user"))
    assert not is_turn_start(block(ASSISTANT_COMPLETION, "assistant"))
    assert not is_turn_start(block(TOOL_CALL, "assistant"))


# --- rule 3: cut index selection ----------------------------------------------------------


def test_walk_counts_only_message_block_tokens() -> None:
    s = Stream()
    s.add(USER_PROMPT, tokens=10, author="user", turn_id="a")
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant", turn_id="a")
    s.add(NOTES, tokens=1000, author="system", turn_id="a")  # huge but not a message block
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant", turn_id="a")
    # 11 tokens: index 3 gives 10, the 1000-token system block at 2 adds nothing, index 1 gives 20.
    assert find_cut_point(s.blocks, 11) == 1
    # 10 tokens are reached at index 3; backtracking then takes the system block at 2 along.
    assert find_cut_point(s.blocks, 10) == 2


def test_returns_none_when_the_budget_is_never_reached() -> None:
    s = Stream()
    s.sized_turn("a")
    total = sum(b.tokens for b in s.blocks)
    assert find_cut_point(s.blocks, total + 1) is None


def test_first_candidate_at_or_after_the_walk_index() -> None:
    s = Stream()
    s.add(USER_PROMPT, tokens=10, author="user", turn_id="a")  # 0
    s.add(TOOL_CALL, tokens=10, author="assistant", turn_id="a")  # 1
    s.add(TOOL_RESULT, tokens=100, author="tool", turn_id="a")  # 2  <- walk stops here
    s.add(TOOL_RESULT, tokens=5, author="tool", turn_id="a")  # 3
    s.add(ASSISTANT_COMPLETION, tokens=5, author="assistant", turn_id="a")  # 4
    # Budget 50 is reached at index 2 (a tool result, not a candidate): the first candidate
    # at or after it is the completion at 4 — never an index before the walk index.
    assert find_cut_point(s.blocks, 50) == 4


def test_cut_is_never_on_a_tool_result() -> None:
    s = Stream()
    s.sized_turn("a", calls=1)
    s.sized_turn("b", calls=3, result_tokens=40)
    for keep in range(0, 300, 5):
        cut = find_cut_point(s.blocks, keep)
        if cut is not None:
            assert s.blocks[cut].type != TOOL_RESULT


def test_backtracks_over_non_message_blocks_to_just_after_a_message_block() -> None:
    s = Stream()
    s.add(USER_PROMPT, tokens=10, author="user", turn_id="a")  # 0
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant", turn_id="a")  # 1
    s.add(NOTES, tokens=3, author="system", turn_id="b")  # 2
    s.add(SOURCES_POOL, tokens=3, turn_id="b")  # 3
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant", turn_id="b")  # 4
    # The walk stops at 4; the system blocks before it are taken along; 1 is a message block.
    assert find_cut_point(s.blocks, 10) == 2


def test_backtracking_stops_just_after_a_summary_and_then_there_is_nothing_to_summarize() -> None:
    s = Stream()
    s.sized_summary()
    s.add(NOTES, tokens=3, author="system")
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant")
    assert find_cut_point(s.blocks, 10) is None


def test_nothing_to_summarize_without_a_summary_either() -> None:
    s = Stream()
    s.add(ASSISTANT_COMPLETION, tokens=10, author="assistant")
    assert find_cut_point(s.blocks, 0) is None
    assert find_cut_point([], 0) is None


def test_the_summary_is_never_summarized_and_never_the_cut() -> None:
    s = Stream()
    s.sized_summary()
    s.sized_turn("a")
    s.sized_turn("b")
    for keep in range(0, 200):
        cut = find_cut_point(s.blocks, keep)
        if cut is not None:
            assert cut > 1 and s.blocks[cut].type != SUMMARY


def test_a_retained_turn_keeps_its_header() -> None:
    s = Stream()
    s.sized_turn("a")  # 0 header, 1 prompt, 2 completion
    s.sized_turn("b", completion=False)  # 3 header, 4 prompt
    # The walk reaches the prompt of turn b (10 tokens); the cut moves onto b's header.
    assert find_cut_point(s.blocks, 10) == 3


def test_header_refinement_only_for_the_same_turn() -> None:
    s = Stream()
    s.sized_turn("a")
    s.add(TURN_HEADER, tokens=2, author="system", turn_id="b")  # 3
    s.add(USER_PROMPT, tokens=10, author="user", turn_id="c")  # 4
    assert find_cut_point(s.blocks, 10) == 4


def test_no_candidate_in_the_tail_falls_back_to_the_last_candidate_before_it() -> None:
    s = Stream()
    s.sized_turn("a")  # 0..2
    s.add(TOOL_CALL, tokens=5, author="assistant", turn_id="a")  # 3
    s.add(TOOL_RESULT, tokens=50, author="tool", turn_id="a")  # 4
    assert find_cut_point(s.blocks, 0) == 3
