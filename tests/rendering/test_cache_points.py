"""Cache points: previous-turn, pre-tail (round N-4), tail (seed 000 "Caching", seed 002)."""

from __future__ import annotations

from dataclasses import replace

from tests.builders import PNG_B64, Stream, last_index
from timeline_app.domain.blocks import NOTES, TOOL_CALL, TOOL_RESULT
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.cache_points import assign_rounds, cache_point_indices, current_turn_start

SETTINGS = RenderSettings()


def test_header_prompt_and_attachments_belong_to_the_first_tool_round() -> None:
    s = Stream()
    s.header("t1")
    s.prompt("t1")
    s.attachment("t1", "a.png", "image/png", PNG_B64)
    s.tool_round("t1", "tc_1")
    s.completion("t1")
    assert assign_rounds(s.blocks) == [0, 0, 0, 0, 0, 0, 1]


def test_a_turn_without_tool_call_is_one_round() -> None:
    s = Stream()
    s.turn("t1")
    s.turn("t2")
    assert assign_rounds(s.blocks) == [0, 0, 0, 1, 1, 1]


def test_an_open_turn_is_the_round_in_progress() -> None:
    s = Stream()
    s.turn("t1")
    s.header("t2")
    s.prompt("t2")
    assert assign_rounds(s.blocks) == [0, 0, 0, 1, 1]
    s.add(NOTES, "t2", author="react", text="thinking", path="ar:t2.react.notes.tc_1")
    s.add(TOOL_CALL, "t2", author="react", path="tc:t2.tc_1.call")
    assert assign_rounds(s.blocks) == [0, 0, 0, 1, 1, 1, 1]


def test_interleaved_tool_calls_keep_their_own_rounds() -> None:
    s = Stream()
    s.header("t1")
    s.prompt("t1")
    s.add(TOOL_CALL, "t1", path="tc:t1.tc_a.call")
    s.add(TOOL_CALL, "t1", path="tc:t1.tc_b.call")
    s.add(TOOL_RESULT, "t1", path="tc:t1.tc_a.result")
    s.add(NOTES, "t1", text="no call id")
    s.add(TOOL_RESULT, "t1", path="tc:t1.tc_b.result")
    assert assign_rounds(s.blocks) == [0, 0, 0, 1, 0, 1, 1]


def test_summary_is_not_a_round_it_joins_the_round_after_it() -> None:
    s = Stream()
    s.summary("t3", ["t1", "t2"])
    s.tool_round("t3", "tc_9", notes=False)
    s.completion("t3")
    s.turn("t4")
    assert assign_rounds(s.blocks) == [0, 0, 0, 1, 2, 2, 2]


def test_previous_turn_point_is_last_block_before_current_turn() -> None:
    s = Stream()
    s.turn("t1", calls=1)
    s.turn("t2", completion=False)
    blocks = s.blocks
    assert current_turn_start(blocks) == last_index(blocks, "t1") + 1
    assert cache_point_indices(blocks, settings=SETTINGS) == [last_index(blocks, "t1"), len(blocks) - 1]


def test_single_turn_has_only_the_tail_point() -> None:
    s = Stream()
    s.turn("t1", calls=2)
    assert cache_point_indices(s.blocks, settings=SETTINGS) == [len(s.blocks) - 1]


def test_pre_tail_point_is_last_block_of_round_n_minus_4() -> None:
    s = Stream()
    s.turn("t1", calls=4)  # rounds 0..4: four tool rounds (the first with header and prompt), completion
    s.turn("t2", calls=4, completion=False)  # rounds 5..8
    blocks = s.blocks
    rounds = assign_rounds(blocks)
    n = max(rounds) + 1
    assert n == 9
    target = n - 1 - SETTINGS.cache_point_offset_rounds  # round 4 = completion of t1
    pre_tail = max(i for i, r in enumerate(rounds) if r == target)
    prev_turn = last_index(blocks, "t1")
    assert pre_tail == prev_turn  # the completion of t1 closes round 4 and the turn
    s.tool_round("t2", "tc_extra")
    blocks = s.blocks
    rounds = assign_rounds(blocks)
    pre_tail = max(i for i, r in enumerate(rounds) if r == max(rounds) - 4)
    assert blocks[pre_tail].turn_id == "t2"
    assert blocks[pre_tail].path == "tc:t2.tc_t2_0.result"  # the end of t2's first tool round
    assert cache_point_indices(blocks, settings=SETTINGS) == [prev_turn, pre_tail, len(blocks) - 1]


def test_pre_tail_point_is_omitted_with_too_few_rounds() -> None:
    s = Stream()
    s.turn("t1", calls=2)  # 3 rounds
    s.turn("t2", completion=False)  # 1 round: N = 4 < offset + 1
    blocks = s.blocks
    assert cache_point_indices(blocks, settings=SETTINGS) == [last_index(blocks, "t1"), len(blocks) - 1]


def test_pre_tail_point_respects_min_rounds() -> None:
    s = Stream()
    s.turn("t1", calls=2)  # rounds 0..2
    settings = RenderSettings(cache_point_offset_rounds=1, cache_point_min_rounds=4)
    assert cache_point_indices(s.blocks, settings=settings) == [len(s.blocks) - 1]
    settings = RenderSettings(cache_point_offset_rounds=1, cache_point_min_rounds=3)
    # round 1 (the second tool round) ends at its tool result, just before the completion.
    assert cache_point_indices(s.blocks, settings=settings) == [len(s.blocks) - 2, len(s.blocks) - 1]


def test_cache_last_false_drops_the_tail_point() -> None:
    s = Stream()
    s.turn("t1", calls=1)
    s.turn("t2", calls=1, completion=False)
    with_tail = cache_point_indices(s.blocks, settings=SETTINGS)
    without = cache_point_indices(s.blocks, settings=SETTINGS, cache_last=False)
    assert with_tail[-1] == len(s.blocks) - 1
    assert without == with_tail[:-1]
    assert len(s.blocks) - 1 not in without


def test_never_more_than_three_points_and_points_are_unique() -> None:
    s = Stream()
    for k in range(6):
        s.turn(f"t{k}", calls=2)
    points = cache_point_indices(s.blocks, settings=SETTINGS)
    assert len(points) == 3
    assert points == sorted(set(points))


def test_empty_stream_has_no_points() -> None:
    assert cache_point_indices([], settings=SETTINGS) == []


def test_hiding_blocks_moves_no_marker() -> None:
    s = Stream()
    for k in range(4):
        s.turn(f"t{k}", calls=2)
    s.turn("t9", calls=1, completion=False)
    before = cache_point_indices(s.blocks, settings=SETTINGS)
    hidden = [
        b.hide(replacement_text="gone", reason="ttl", replacement_tokens=1) if b.type == TOOL_RESULT else b
        for b in s.blocks
    ]
    assert cache_point_indices(hidden, settings=SETTINGS) == before


def test_seed_002_after_compaction_summary_d_e() -> None:
    """[SUMMARY(A..C)] [TURN D] [TURN E]: prev-turn at end of D, tail at end of E, no pre-tail."""
    s = Stream()
    s.summary("turn_d", ["turn_a", "turn_b", "turn_c"])
    s.turn("turn_d")
    s.turn("turn_e", completion=False)
    blocks = s.blocks
    assert cache_point_indices(blocks, settings=SETTINGS) == [last_index(blocks, "turn_d"), len(blocks) - 1]


def test_seed_002_after_compaction_with_split_turn_tail() -> None:
    """[SUMMARY(A..B + C-prefix)] [TURN C (tail)] [TURN D] [TURN E]."""
    s = Stream()
    s.summary("turn_c", ["turn_a", "turn_b", "turn_c"], meta={"split_turn_id": "turn_c"})
    s.tool_round("turn_c", "tc_c2", notes=False)  # the retained tail of turn C
    s.completion("turn_c")
    s.turn("turn_d", calls=1)
    s.turn("turn_e", calls=1, completion=False)
    blocks = s.blocks
    rounds = assign_rounds(blocks)
    # The summary joins C's retained tool round; C's completion, D's tool round and completion,
    # E's tool round: 5 rounds, so the pre-tail point closes round 0 (C's tool result).
    assert rounds[:3] == [0, 0, 0] and max(rounds) + 1 == 5
    assert cache_point_indices(blocks, settings=SETTINGS) == [
        2,
        last_index(blocks, "turn_d"),
        len(blocks) - 1,
    ]


def test_turn_without_header_starts_at_user_prompt() -> None:
    s = Stream()
    s.prompt("t1")
    s.completion("t1")
    s.prompt("t2")
    s.tool_round("t2", "tc_1")
    assert current_turn_start(s.blocks) == 2
    assert cache_point_indices(s.blocks, settings=SETTINGS) == [1, len(s.blocks) - 1]


def test_points_depend_on_structure_not_text() -> None:
    s = Stream()
    s.turn("t1", calls=2)
    s.turn("t2", calls=2, completion=False)
    edited = [replace(b, text=b.text + " edited", tokens=b.tokens * 7) for b in s.blocks]
    assert cache_point_indices(edited, settings=SETTINGS) == cache_point_indices(s.blocks, settings=SETTINGS)


# --------------------------------------------------------------------------------------------
# Seed 002 "Reference Diagram": [TURN A] [TURN B] [TURN C] [TURN D] [TURN E], one round each.


def _diagram(e_state: str) -> Stream:
    s = Stream()
    for turn in ("turn_a", "turn_b", "turn_c", "turn_d"):
        s.turn(turn)
    if e_state == "finished":
        s.turn("turn_e")
    else:  # E has called a tool and waits for its result
        s.header("turn_e")
        s.prompt("turn_e")
        s.add(NOTES, "turn_e", author="react", text="let me look", path="ar:turn_e.react.notes.tc_e")
        s.add(TOOL_CALL, "turn_e", author="react", path="tc:turn_e.tc_e.call")
    return s


def test_pretail_point_is_end_of_turn_a_when_turn_e_is_finished() -> None:
    blocks = _diagram("finished").blocks
    assert cache_point_indices(blocks, settings=SETTINGS) == [
        last_index(blocks, "turn_a"),
        last_index(blocks, "turn_d"),
        len(blocks) - 1,
    ]


def test_pretail_point_ignores_header_round_when_tool_result_pending() -> None:
    blocks = _diagram("pending").blocks
    assert assign_rounds(blocks)[-4:] == [4, 4, 4, 4]  # E's header, prompt, notes and call: one round
    assert cache_point_indices(blocks, settings=SETTINGS) == [
        last_index(blocks, "turn_a"),
        last_index(blocks, "turn_d"),
        len(blocks) - 1,
    ]


def test_pretail_point_stays_when_the_pending_result_arrives_hidden() -> None:
    s = _diagram("pending")
    before = cache_point_indices(s.blocks, settings=SETTINGS)
    s.add(TOOL_RESULT, "turn_e", author="tool", path="tc:turn_e.tc_e.result", text="{}")
    hidden = [
        b.hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=1)
        if b.type == TOOL_RESULT
        else b
        for b in s.blocks
    ]
    # the result joins E's round: pre-tail and previous-turn points do not move, the tail does
    assert cache_point_indices(hidden, settings=SETTINGS) == [*before[:2], len(hidden) - 1]


def test_pretail_point_counts_each_tool_call_of_a_turn_as_a_round() -> None:
    s = Stream()
    s.turn("t1")  # round 0
    s.turn("t2", calls=3)  # rounds 1, 2, 3 (tool calls) and 4 (completion)
    s.header("t3")
    s.prompt("t3")
    s.tool_round("t3", "tc_t3_a")  # round 5
    s.add(NOTES, "t3", author="react", text="next", path="ar:t3.react.notes.tc_t3_b")  # round 6 (mid-round)
    s.add(TOOL_CALL, "t3", author="react", path="tc:t3.tc_t3_b.call")
    blocks = s.blocks
    assert max(assign_rounds(blocks)) + 1 == 7
    pre_tail = next(i for i, b in enumerate(blocks) if b.path == "tc:t2.tc_t2_1.result")  # round 2
    assert cache_point_indices(blocks, settings=SETTINGS) == [
        pre_tail,
        last_index(blocks, "t2"),
        len(blocks) - 1,
    ]


def test_summary_carries_a_cache_point_only_where_the_rules_put_one() -> None:
    s = Stream()
    s.summary("turn_e", ["turn_a"])
    s.turn("turn_b")
    s.header("turn_e")
    s.prompt("turn_e")
    s.add(TOOL_CALL, "turn_e", author="react", path="tc:turn_e.tc_e.call")
    blocks = s.blocks
    # two rounds (the summary is none): no pre-tail point, so none on the summary
    assert cache_point_indices(blocks, settings=SETTINGS) == [last_index(blocks, "turn_b"), len(blocks) - 1]
    # with five rounds after it, the pre-tail point closes the first of them, not the summary
    s = Stream()
    s.summary("turn_f", ["turn_a"])
    for turn in ("turn_b", "turn_c", "turn_d", "turn_e"):
        s.turn(turn)
    s.turn("turn_f", calls=1, completion=False)
    blocks = s.blocks
    assert cache_point_indices(blocks, settings=SETTINGS) == [
        last_index(blocks, "turn_b"),
        last_index(blocks, "turn_e"),
        len(blocks) - 1,
    ]
    # a summary directly before the current turn is the previous-turn point
    s = Stream()
    s.summary("turn_e", ["turn_a", "turn_b"])
    s.turn("turn_e", calls=1, completion=False)
    assert cache_point_indices(s.blocks, settings=SETTINGS) == [0, len(s.blocks) - 1]
