"""The cut-point index at the edges the mutation run found untested (docs/testing.md): a window
ending in its summary, a turn header right after the summary, a split turn that continues the
summary's turn, and blocks without a turn id."""

from __future__ import annotations

from compaction.cutpoint import WindowIndex, first_content_index
from tests.builders import Stream
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
)


def test_a_window_that_ends_in_its_summary_has_no_content_after_it() -> None:
    s = Stream()
    s.sized_turn("t1")
    s.sized_summary("t1")
    assert first_content_index(s.blocks) == len(s.blocks)
    after_summary = len(s.blocks)
    s.sized_turn("t2")
    assert first_content_index(s.blocks) == after_summary


def test_a_cut_that_would_keep_only_the_header_after_the_summary_is_no_cut() -> None:
    # The walk lands on t2's prompt, right after t2's header, right after the summary: the
    # retained turn keeps its header, which leaves nothing between the summary and the cut.
    s = Stream()
    s.sized_summary("t1")
    s.add(TURN_HEADER, turn_id="t2")
    s.add(USER_PROMPT, turn_id="t2", author="user")
    s.add(ASSISTANT_COMPLETION, turn_id="t2")
    index = WindowIndex(s.blocks)
    assert index.start == 1
    assert index.cut_from_walk_index(2) is None


def test_a_split_prefix_never_reaches_back_into_the_summary_of_the_same_turn() -> None:
    # Compaction inside turn t5 leaves a summary carrying t5 and t5's later blocks after it.
    s = Stream()
    s.sized_summary("t5")
    s.add(TOOL_CALL, turn_id="t5")
    s.add(TOOL_RESULT, turn_id="t5")
    s.add(ASSISTANT_COMPLETION, turn_id="t5")
    index = WindowIndex(s.blocks)
    assert index.segment_start[1] == 1
    assert index.split_prefix_start(3) == 1


def test_a_split_prefix_starts_where_the_cut_blocks_turn_begins() -> None:
    # t1 ... then t2's first visible block is not a turn start (t2 began before the window).
    s = Stream()
    s.add(TURN_HEADER, turn_id="t1")
    s.add(USER_PROMPT, turn_id="t1", author="user")
    s.add(TOOL_CALL, turn_id="t2")
    s.add(ASSISTANT_COMPLETION, turn_id="t2")
    index = WindowIndex(s.blocks)
    assert index.split_prefix_start(3) == 2


def test_a_block_without_a_turn_id_splits_nothing() -> None:
    s = Stream()
    s.add(TURN_HEADER, turn_id="t1")
    s.add(NOTES, turn_id="")
    s.add(ASSISTANT_COMPLETION, turn_id="")
    index = WindowIndex(s.blocks)
    assert index.split_prefix_start(2) == 2
