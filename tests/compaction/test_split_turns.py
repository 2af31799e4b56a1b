"""Split-turn handling: seed 002 "Turn boundary and split turns"."""

from __future__ import annotations

from compaction.digest import build_digest
from compaction.planner import plan_at_cut, plan_compaction
from compaction.summary.block import build_summary_block
from tests.builders import Stream
from timeline_app.domain.blocks import TOOL_CALL, TOOL_RESULT, TURN_HEADER, USER_PROMPT, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.continued_header import continued_turn_header
from timeline_app.rendering.pipeline import RenderOptions, render_window

SETTINGS = RenderSettings(
    max_tokens=2000, threshold=0.5, keep_recent_tokens=300, summary_max_tokens=100, split_prefix_max_tokens=50
)


def one_long_turn() -> Stream:
    s = Stream()
    s.sized_turn("a")
    s.sized_turn("b")
    s.sized_turn("c", calls=12, result_tokens=80)
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
    # The "(continued)" header the render will add before the cut, as the real summary makes it.
    summary = Block(
        seq=0, **build_summary_block(plan, summary_text="s", split_text="p", digest={}, turn_id="c")
    )
    header = continued_turn_header([summary, plan.retained[0]])
    assert header is not None and header.tokens > 0
    assert plan.estimated_tokens == 7 + 100 + 50 + header.tokens + plan.retained_tokens


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
    s.sized_turn("c", calls=12, result_tokens=80)
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SETTINGS)
    assert plan is not None
    assert plan.summarized == ()
    assert plan.split_turn_id == "c"
    assert plan.split_prefix == tuple(s.blocks[: plan.cut_index])


def test_cut_at_the_first_block_of_a_new_turn_without_a_turn_start_is_not_a_split() -> None:
    s = Stream()
    s.sized_turn("a")
    s.add(TOOL_CALL, tokens=5, author="assistant", turn_id="b", path="tc:b.tc_1.call")
    s.add("react.tool.result", tokens=50, author="tool", turn_id="b", path="tc:b.tc_1.result")
    plan = plan_at_cut(s.blocks, 3, system_tokens=0, settings=SETTINGS)
    assert plan.split_turn_id is None
    assert plan.split_prefix == ()
    assert plan.covered_turn_ids == ("a",)


def _compacted_window(s: Stream, cut: int | None = None) -> list[Block]:
    """The visible window after the planned compaction: the stored summary, then the retained blocks."""
    if cut is None:
        plan = plan_compaction(s.blocks, system_tokens=0, settings=SETTINGS)
    else:
        plan = plan_at_cut(s.blocks, cut, system_tokens=0, settings=SETTINGS)
    assert plan is not None
    fields = build_summary_block(
        plan, summary_text="history", split_text="prefix", digest=build_digest(plan.compacted), turn_id="c"
    )
    summary = Block(seq=len(s.blocks) + 1, **fields, tokens=30)
    return [summary, *plan.retained]


def _texts(window: list[Block]) -> list[str]:
    rendered = render_window(window, settings=SETTINGS, options=RenderOptions(format="text"))
    return [part["text"] for part in rendered.blocks]


def test_window_starting_mid_turn_renders_a_continued_header_before_its_first_block() -> None:
    s = Stream()
    s.sized_turn("a")
    s.sized_turn("b")
    header = s.add(TURN_HEADER, tokens=2, turn_id="c", author="system", ts="2026-02-09T10:00:00Z")
    s.add(USER_PROMPT, tokens=10, turn_id="c", author="user", text="please do c")
    for i in range(12):
        s.add(TOOL_CALL, tokens=5, turn_id="c", author="assistant", path=f"tc:c.tc_{i}.call")
        s.add(TOOL_RESULT, tokens=80, turn_id="c", author="tool", path=f"tc:c.tc_{i}.result", text="{}")
    window = _compacted_window(s)
    assert window[0].meta["split_turn_id"] == "c" and window[1].type == TOOL_CALL

    texts = _texts(window)
    assert texts[0].startswith("[CONVERSATION SUMMARY] covered_turns=a,b,c split_turn=c")
    assert texts[1] == f"[TURN c] ts={header.ts} (continued)"
    assert texts[2].startswith("[react.tool.call] (JSON)\n[path: " + window[1].path)
    # the continued header starts the current turn: the summary before it is the previous-turn point
    rendered = render_window(window, settings=SETTINGS, options=RenderOptions(format="text"))
    assert rendered.cache_points == [0, len(rendered.blocks) - 1]
    # produced at render time: nothing is added to the window, and the same window gives the same bytes
    assert [b.type for b in window].count(TURN_HEADER) == 0
    assert _texts(window) == texts
    # the first retained block hidden (TTL) changes nothing about the header
    hidden = [window[0], window[1].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=2)]
    assert _texts([*hidden, *window[2:]])[1] == texts[1]


def test_window_starting_at_a_turn_header_gets_no_continued_header() -> None:
    s = Stream()
    for turn in ("a", "b", "c"):
        s.sized_turn(turn, calls=2)
    d = s.sized_turn("d", calls=2)
    window = _compacted_window(s, cut=s.blocks.index(d[0]))
    assert "split_turn_id" not in window[0].meta and window[1].type == TURN_HEADER
    texts = _texts(window)
    assert sum("[TURN " in t for t in texts) == sum(b.type == TURN_HEADER for b in window)
    assert "(continued)" not in "".join(texts)
