"""Planning: when to compact, what gets summarized, the halving budget (seed 002, DESIGN §4)."""

from __future__ import annotations

from compaction.cutpoint import find_cut_point
from compaction.planner import compaction_is_accepted, needs_compaction, plan_at_cut, plan_compaction
from tests.builders import Stream
from timeline_app.domain.blocks import TOOL_CALL, TOOL_RESULT, TURN_HEADER
from timeline_app.domain.settings import RenderSettings

SMALL = RenderSettings(
    max_tokens=2000, threshold=0.5, keep_recent_tokens=300, summary_max_tokens=100, split_prefix_max_tokens=50
)


def long_stream(turns: int = 12) -> Stream:
    s = Stream()
    for i in range(turns):
        s.sized_turn(f"t{i}", calls=2)
    return s


def test_no_compaction_under_the_limit() -> None:
    s = long_stream(2)
    total = sum(b.tokens for b in s.blocks)
    assert total <= SMALL.compaction_limit
    assert not needs_compaction(s.blocks, system_tokens=0, settings=SMALL)
    assert plan_compaction(s.blocks, system_tokens=0, settings=SMALL) is None


def test_needs_compaction_counts_system_tokens_and_uses_a_strict_threshold() -> None:
    s = long_stream(2)
    total = sum(b.tokens for b in s.blocks)
    limit = SMALL.compaction_limit
    assert not needs_compaction(s.blocks, system_tokens=limit - total, settings=SMALL)
    assert needs_compaction(s.blocks, system_tokens=limit - total + 1, settings=SMALL)


def test_needs_compaction_uses_effective_tokens_of_hidden_blocks() -> None:
    s = long_stream(8)
    hidden = [b.hide(replacement_text="gone", reason="ttl", replacement_tokens=1) for b in s.blocks]
    assert needs_compaction(s.blocks, system_tokens=0, settings=SMALL)
    assert not needs_compaction(hidden, system_tokens=0, settings=SMALL)


def test_compacts_over_the_limit_and_the_result_fits() -> None:
    s = long_stream()
    plan = plan_compaction(s.blocks, system_tokens=100, settings=SMALL)
    assert plan is not None
    assert plan.before_tokens == 100 + sum(b.tokens for b in s.blocks)
    assert plan.estimated_tokens <= SMALL.compaction_limit
    assert plan.retained_tokens == sum(b.tokens for b in plan.retained)
    assert plan.first_retained_seq == s.blocks[plan.cut_index].seq
    assert plan.previous_summary is None
    assert plan.keep_recent_tokens == 300
    assert list(plan.summarized) + list(plan.split_prefix) + list(plan.retained) == s.blocks


def test_forced_compaction_under_the_limit_halves_until_a_cut_exists() -> None:
    s = long_stream(2)  # about 280 tokens, below keep_recent_tokens=300
    assert plan_compaction(s.blocks, system_tokens=0, settings=SMALL) is None
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SMALL, force=True)
    assert plan is not None
    # 300 reaches no cut; the next halving step, 150, does (a quarter, 75, would be wrong).
    assert find_cut_point(s.blocks, 300) is None
    assert find_cut_point(s.blocks, 150) is not None
    assert plan.keep_recent_tokens == 150
    assert plan.first_retained_seq == s.blocks[find_cut_point(s.blocks, 150)].seq
    assert plan.compacted


def test_halves_keep_recent_until_the_estimate_fits() -> None:
    s = long_stream()
    tight = RenderSettings(
        max_tokens=1000,
        threshold=0.5,
        keep_recent_tokens=800,
        summary_max_tokens=100,
        split_prefix_max_tokens=50,
    )
    plan = plan_compaction(s.blocks, system_tokens=0, settings=tight)
    assert plan is not None
    assert plan.keep_recent_tokens == 200
    assert plan.estimated_tokens <= tight.compaction_limit
    # The configured budget alone would not have fit.
    first = find_cut_point(s.blocks, 800)
    assert first is not None
    assert sum(b.tokens for b in s.blocks[first:]) + 100 > tight.compaction_limit


def test_the_first_halving_step_that_fits_is_taken_exactly() -> None:
    # 800 does not fit a limit of 550, half of it (400) does: the plan keeps 400, not a quarter.
    s = long_stream()
    roomy = RenderSettings(
        max_tokens=1100,
        threshold=0.5,
        keep_recent_tokens=800,
        summary_max_tokens=100,
        split_prefix_max_tokens=50,
    )
    at = {
        k: plan_at_cut(s.blocks, find_cut_point(s.blocks, k), system_tokens=0, settings=roomy)
        for k in (800, 400)
    }
    assert at[800].estimated_tokens > roomy.compaction_limit >= at[400].estimated_tokens
    plan = plan_compaction(s.blocks, system_tokens=0, settings=roomy)
    assert plan is not None
    assert plan.keep_recent_tokens == 400
    assert plan.first_retained_seq == at[400].first_retained_seq
    assert plan.estimated_tokens == at[400].estimated_tokens


def test_when_nothing_fits_the_plan_retaining_the_least_wins() -> None:
    s = long_stream()
    impossible = RenderSettings(
        max_tokens=1000,
        threshold=0.05,
        keep_recent_tokens=300,
        summary_max_tokens=100,
        split_prefix_max_tokens=50,
    )
    plan = plan_compaction(s.blocks, system_tokens=0, settings=impossible)
    assert plan is not None
    assert plan.estimated_tokens > impossible.compaction_limit
    reachable = {find_cut_point(s.blocks, k) for k in range(0, 301)} - {None}
    best = min(
        plan_at_cut(s.blocks, c, system_tokens=0, settings=impossible).estimated_tokens
        for c in reachable
        if c is not None
    )
    assert plan.estimated_tokens == best


def test_compaction_after_an_existing_summary() -> None:
    s = Stream()
    s.sized_summary("t0", covered=["a", "b"])
    for i in range(1, 12):
        s.sized_turn(f"t{i}", calls=2)
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SMALL)
    assert plan is not None
    assert plan.previous_summary is s.blocks[0]
    assert s.blocks[0] not in plan.summarized
    assert plan.summarized[0] is s.blocks[1]
    # The previous summary's turns come first, then the newly compacted ones in order.
    assert plan.covered_turn_ids[:3] == ("a", "b", "t1")
    assert [s.blocks[0], *plan.summarized, *plan.split_prefix, *plan.retained] == s.blocks


def test_covered_turn_ids_are_deduplicated_in_order_of_first_appearance() -> None:
    s = Stream()
    s.sized_summary("t0", covered=["t1", "x"])
    for i in range(1, 12):
        s.sized_turn(f"t{i}", calls=2)
    plan = plan_compaction(s.blocks, system_tokens=0, settings=SMALL)
    assert plan is not None
    assert plan.covered_turn_ids[:3] == ("t1", "x", "t2")
    assert len(set(plan.covered_turn_ids)) == len(plan.covered_turn_ids)


def test_a_retained_turn_start_keeps_its_header_and_is_not_split() -> None:
    s = long_stream()
    for cut in range(1, len(s.blocks)):
        if s.blocks[cut].type == TURN_HEADER:
            plan = plan_at_cut(s.blocks, cut, system_tokens=0, settings=SMALL)
            assert plan.split_turn_id is None and plan.split_prefix == ()


def test_tool_call_is_kept_with_its_results() -> None:
    s = long_stream()
    for keep in range(0, 1500, 7):
        cut = find_cut_point(s.blocks, keep)
        if cut is None:
            continue
        retained = s.blocks[cut:]
        retained_calls = {b.tool_call_id for b in retained if b.type == TOOL_CALL}
        retained_results = {b.tool_call_id for b in retained if b.type == TOOL_RESULT}
        # Every retained result has its call retained too: the cut never separates them.
        assert retained_results <= retained_calls
        assert s.blocks[cut].type != TOOL_RESULT


def test_plan_at_cut_rejects_cuts_outside_the_window() -> None:
    s = Stream()
    s.sized_summary()
    s.sized_turn("a")
    for bad in (0, 1, len(s.blocks)):
        try:
            plan_at_cut(s.blocks, bad, system_tokens=0, settings=SMALL)
        except ValueError:
            continue
        raise AssertionError(f"cut {bad} accepted")


def test_compaction_is_accepted_only_when_it_reduces_tokens() -> None:
    assert compaction_is_accepted(1000, 999)
    assert not compaction_is_accepted(1000, 1000)
    assert not compaction_is_accepted(1000, 1200)
