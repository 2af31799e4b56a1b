"""The one cache planner: boundaries onto markable parts, each provider's limits and markers."""

from __future__ import annotations

from typing import Any

from timeline_app.rendering.cache_plan import (
    ANTHROPIC,
    GEMINI,
    NO_MARKERS,
    OPENAI_MAX_BREAKPOINTS,
    MarkerStyle,
    Plan,
    choose_slots,
    marker_style,
    openai_explicit,
    request_ends,
)

OPENAI = openai_explicit(("30m", "12h"))


def plan(
    points: list[int],
    markable: list[int],
    count: int,
    *,
    style: MarkerStyle,
    head_tokens: int,
    min_tokens: int,
) -> Plan:
    """Blocks of 2,000 tokens each (block ``i`` ends at ``2000 * (i + 1)``), seq ``100 + i``;
    ``markable``: the blocks whose part can carry a marker."""
    places: dict[int, tuple[Any, ...]] = {i: (i, 0) for i in markable}
    return choose_slots(
        points,
        places,
        count,
        tokens=lambda i: 2000 * (i + 1),
        seq=lambda i: 100 + i,
        style=style,
        head_tokens=head_tokens,
        min_tokens=min_tokens,
    )


def test_a_boundary_on_an_unmarkable_block_goes_to_the_nearest_markable_part_before_it_once():
    # Blocks 2 and 3 render nothing markable (a tool call, a thinking block): both boundaries land
    # on block 1's part, which carries one marker.
    chosen = plan([2, 3, 5], [0, 1, 4, 5], 6, style=ANTHROPIC, head_tokens=0, min_tokens=0)
    assert [s.seq for s in chosen.slots] == [101, 105]
    assert [s.tokens for s in chosen.slots] == [4000, 12000]
    assert chosen.head is False


def test_no_marker_below_the_minimum_cacheable_prefix():
    chosen = plan([0, 1, 2], [0, 1, 2], 3, style=ANTHROPIC, head_tokens=0, min_tokens=4000)
    assert [s.seq for s in chosen.slots] == [101, 102]  # 2,000 tokens < 4,000: block 0 unmarked


def test_the_head_counts_against_the_limit_and_the_latest_boundaries_are_kept():
    points = list(range(10))
    anthropic = plan(points, points, 10, style=ANTHROPIC, head_tokens=1500, min_tokens=1024)
    assert anthropic.head and [s.seq for s in anthropic.slots] == [107, 108, 109]  # 1 + 3 = 4
    many = list(range(200))
    openai = plan(many, many, 200, style=OPENAI, head_tokens=1500, min_tokens=1024)
    assert openai.head and len(openai.slots) == OPENAI_MAX_BREAKPOINTS - 1
    assert openai.slots[-1].seq == 299 and openai.slots[0].seq == 100 + 200 - 79


def test_every_boundary_is_kept_while_they_fit_the_limit():
    for count in (1, 40, 50, 79):
        points = list(range(count))
        chosen = plan(points, points, count, style=OPENAI, head_tokens=1500, min_tokens=1024)
        assert len(chosen.slots) == count, count


def test_a_head_below_the_minimum_carries_no_marker():
    assert plan([0], [0], 1, style=ANTHROPIC, head_tokens=1000, min_tokens=1024).head is False


def test_a_provider_without_markers_gets_none():
    chosen = plan([0, 1], [0, 1], 2, style=NO_MARKERS, head_tokens=5000, min_tokens=0)
    assert chosen.head is False and chosen.slots == []


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


def test_gemini_has_its_style_and_it_places_no_marker_anywhere():
    # The example of docs/native-formats.md, as it is there.
    assert marker_style("gemini_contents") is GEMINI  # provider "google", no field, no marker
    plan = choose_slots(
        [0, 2],
        {0: (0, 0), 1: (1, 0), 2: (2, 0)},
        3,
        tokens=lambda i: 5000 * (i + 1),
        seq=lambda i: 100 + i,
        style=GEMINI,
        head_tokens=4096,
        min_tokens=1024,
    )
    assert plan.slots == [] and plan.head is False
    assert GEMINI.provider == "google" and GEMINI.marker(3600) == {} and GEMINI.request_fields(3600) == {}


def test_every_native_format_has_its_marker_style():
    assert marker_style("anthropic_messages") is ANTHROPIC
    assert marker_style("anthropic_messages", ("30m", "12h")) is ANTHROPIC
    assert marker_style("gemini_contents", ("30m", "12h")) is GEMINI
    for fmt in ("openai_responses", "openai_chat"):
        assert marker_style(fmt) is NO_MARKERS  # a model before GPT-5.6
        assert marker_style(fmt, ("30m", "12h")) == OPENAI
    assert marker_style("anthropic") is NO_MARKERS  # the seed formats place theirs themselves


def test_past_the_read_point_a_request_keeps_four_breakpoints_spread_over_the_stretch():
    """OpenAI writes a request's latest four breakpoints, only past the prefix it reads: after a
    hide the forecast reads up to block 3, and of the sixteen boundaries past it the request keeps
    those nearest a quarter, a half and three quarters of the stretch's tokens, and its last (the
    others would never be written: later requests read past them). bench cache-cost seed 1:
    1.037 -> 1.020 of the ideal."""
    points = list(range(20))
    places: dict[int, tuple[Any, ...]] = {i: (i, 0) for i in points}
    chosen = choose_slots(
        points,
        places,
        20,
        tokens=lambda i: 2000 * (i + 1),
        seq=lambda i: 100 + i,
        style=OPENAI,
        head_tokens=1500,
        min_tokens=1024,
        read_through=3,
    )
    # Stretch 8,000 .. 40,000 tokens: targets 16,000, 24,000, 32,000 (blocks 7, 11, 15), and 19.
    assert [s.seq for s in chosen.slots] == [100, 101, 102, 103, 107, 111, 115, 119]
    assert chosen.head
    # Four or fewer past the read point, none left out; Anthropic's markers never spread.
    few = choose_slots(
        points,
        places,
        20,
        tokens=lambda i: 2000 * (i + 1),
        seq=lambda i: 100 + i,
        style=OPENAI,
        head_tokens=1500,
        min_tokens=1024,
        read_through=15,
    )
    assert len(few.slots) == 20
    anthropic = choose_slots(
        points,
        places,
        20,
        tokens=lambda i: 2000 * (i + 1),
        seq=lambda i: 100 + i,
        style=ANTHROPIC,
        head_tokens=1500,
        min_tokens=1024,
        read_through=3,
    )
    assert [s.seq for s in anthropic.slots] == [117, 118, 119]
