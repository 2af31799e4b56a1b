"""Split-turn handling: seed 002 "Turn boundary and split turns"."""

from __future__ import annotations

from compaction.digest import build_digest
from compaction.planner import build_summary_block, plan_at_cut, plan_compaction
from tests.compaction.factories import Stream
from timeline_app.rendering.blocks import TOOL_CALL, TURN_HEADER
from timeline_app.rendering.settings import RenderSettings

SETTINGS = RenderSettings(
    max_tokens=2000, threshold=0.5, keep_recent_tokens=300, summary_max_tokens=100, split_prefix_max_tokens=50
)


def one_long_turn() -> Stream:
    s = Stream()
    s.turn("a")
    s.turn("b")
    s.turn("c", calls=12, result_tokens=80)
    return s


def test_a_cut_inside_a_turn_summarizes_only_its_prefix() -> None:
    s = one_long_turn()
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SETTINGS)
    assert plan is not None
    cut_block = s.blocks[plan.cut_index]
    assert cut_block.type == TOOL_CALL and cut_block.turn_id == "c"
    assert plan.split_turn_id == "c"
    assert plan.split_prefix[0].type == TURN_HEADER and plan.split_prefix[0].turn_id == "c"
    assert all(b.turn_id == "c" for b in plan.split_prefix)
    assert {b.turn_id for b in plan.summarized} == {"a", "b"}
    # The cut block stays in the retained window.
    assert plan.retained[0] is cut_block
    # The split turn is covered (its prefix is summarized) and named.
    assert plan.covered_turn_ids == ("a", "b", "c")


def test_split_turn_estimate_includes_the_prefix_allowance() -> None:
    s = one_long_turn()
    plan = plan_compaction(s.blocks, system_tokens=7, settings=SETTINGS)
    assert plan is not None
    assert plan.estimated_tokens == 7 + 100 + 50 + plan.retained_tokens


def test_split_prefix_goes_under_turn_context_heading() -> None:
    s = one_long_turn()
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SETTINGS)
    assert plan is not None
    fields = build_summary_block(
        plan,
        summary_text="history summary",
        split_text="prefix summary",
        digest=build_digest(plan.compacted),
        turn_id="c",
    )
    assert fields["text"] == "history summary\n\n## Turn Context (split turn)\nprefix summary"
    assert fields["meta"]["split_turn_id"] == "c"
    assert fields["meta"]["first_retained_seq"] == s.blocks[plan.cut_index].seq


def test_a_split_can_have_an_empty_history_part() -> None:
    s = Stream()
    s.turn("c", calls=12, result_tokens=80)
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SETTINGS)
    assert plan is not None
    assert plan.summarized == ()
    assert plan.split_turn_id == "c"
    assert plan.split_prefix == tuple(s.blocks[: plan.cut_index])


def test_cut_at_the_first_block_of_a_new_turn_without_a_turn_start_is_not_a_split() -> None:
    s = Stream()
    s.turn("a")
    s.add(TOOL_CALL, tokens=5, author="assistant", turn_id="b", path="tc:b.tc_1.call")
    s.add("react.tool.result", tokens=50, author="tool", turn_id="b", path="tc:b.tc_1.result")
    plan = plan_at_cut(s.blocks, 3, system_tokens=0, settings=SETTINGS)
    assert plan.split_turn_id is None
    assert plan.split_prefix == ()
    assert plan.covered_turn_ids == ("a",)
