"""The one cache planner: boundaries onto markable parts, each provider's limits and markers."""

from __future__ import annotations

from timeline_app.rendering.cache_plan import (
    ANTHROPIC,
    NO_MARKERS,
    OPENAI_MAX_BREAKPOINTS,
    Slot,
    choose_slots,
    openai_explicit,
    request_ends,
)

OPENAI = openai_explicit(("30m", "12h"))


def _slots(*indices: int, tokens: int = 2000) -> dict[int, Slot]:
    return {i: Slot(at=(i, 0), tokens=tokens * (i + 1), seq=100 + i) for i in indices}


def test_a_boundary_on_an_unmarkable_block_goes_to_the_nearest_markable_part_before_it_once():
    # Blocks 2 and 3 render nothing markable (a tool call, a thinking block): both boundaries land
    # on block 1's part, which carries one marker.
    plan = choose_slots([2, 3, 5], _slots(0, 1, 4, 5), 6, style=ANTHROPIC, head_tokens=0, min_tokens=0)
    assert [s.seq for s in plan.slots] == [101, 105]
    assert plan.head is False


def test_no_marker_below_the_minimum_cacheable_prefix():
    plan = choose_slots([0, 1, 2], _slots(0, 1, 2), 3, style=ANTHROPIC, head_tokens=0, min_tokens=4000)
    assert [s.seq for s in plan.slots] == [101, 102]  # 2,000 tokens < 4,000: block 0 unmarked


def test_the_head_counts_against_the_limit_and_the_latest_boundaries_are_kept():
    points = list(range(10))
    slots = _slots(*points)
    anthropic = choose_slots(points, slots, 10, style=ANTHROPIC, head_tokens=1500, min_tokens=1024)
    assert anthropic.head and [s.seq for s in anthropic.slots] == [107, 108, 109]  # 1 + 3 = 4
    many = list(range(200))
    openai = choose_slots(many, _slots(*many), 200, style=OPENAI, head_tokens=1500, min_tokens=1024)
    assert openai.head and len(openai.slots) == OPENAI_MAX_BREAKPOINTS - 1
    assert openai.slots[-1].seq == 299 and openai.slots[0].seq == 100 + 200 - 79


def test_a_head_below_the_minimum_carries_no_marker():
    plan = choose_slots([0], _slots(0), 1, style=ANTHROPIC, head_tokens=1000, min_tokens=1024)
    assert plan.head is False


def test_a_provider_without_markers_gets_none():
    plan = choose_slots([0, 1], _slots(0, 1), 2, style=NO_MARKERS, head_tokens=5000, min_tokens=0)
    assert plan.head is False and plan.slots == []


def test_each_provider_writes_its_own_marker_and_request_fields():
    assert ANTHROPIC.marker(300) == {"type": "ephemeral"}
    assert ANTHROPIC.marker(3600) == {"type": "ephemeral", "ttl": "1h"}
    assert ANTHROPIC.request_fields(3600) == {}
    assert OPENAI.marker(3600) == {"mode": "explicit"}
    assert OPENAI.request_fields(3599) == {"prompt_cache_options": {"mode": "explicit", "ttl": "30m"}}
    assert OPENAI.request_fields(3600) == {"prompt_cache_options": {"mode": "explicit", "ttl": "12h"}}
    # A model that allows only 30 minutes keeps 30 minutes whatever the setting.
    thirty = openai_explicit(("30m",))
    assert thirty.request_fields(86_400) == {"prompt_cache_options": {"mode": "explicit", "ttl": "30m"}}
    assert (OPENAI.marker_ttl_seconds(300), OPENAI.marker_ttl_seconds(7200)) == (1800, 43_200)


def test_request_ends_are_the_last_block_of_each_user_message_the_assistant_answered():
    roles = ["user", "assistant", "user", "assistant", "user"]
    message_of = {0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 6: 4}
    # Message 4 is the last (not answered yet): the tail's own point covers it.
    assert request_ends(message_of, roles) == [1, 4]
    assert request_ends({0: 0, 1: 1}, ["system", "assistant"]) == []
