"""The provider cache simulator against hand-computed cases (Anthropic's documented rules)."""

from __future__ import annotations

from typing import Any

from timeline_app.domain.tokens import count_text_tokens
from timeline_bench.provider_sim import (
    CacheSimulator,
    cost,
    ideal,
    openai_cost,
    simulate,
    simulate_openai,
    without_breakpoints,
)

EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}


def text(tokens: int, word: str = "a", control: dict[str, str] | None = None) -> dict[str, Any]:
    """A text block of exactly ``tokens`` tokens (`` a`` is one token)."""
    block: dict[str, Any] = {"type": "text", "text": f" {word}" * tokens}
    assert count_text_tokens(block["text"]) == tokens
    if control:
        block["cache_control"] = dict(control)
    return block


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": list(blocks)}]}


def usage(input_tokens: int, read: int = 0, w5: int = 0, w1: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": w5 + w1,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1},
    }


def test_a_write_then_a_hit_that_writes_the_new_stretch():
    first = user(text(1500, "a", EPHEMERAL), text(100, "b"))
    second = user(text(1500, "a"), text(100, "b"), text(600, "c", EPHEMERAL), text(50, "d"))
    assert simulate([(0, first), (60, second)]) == [
        usage(100, w5=1500),
        # The first 1500 tokens (the prefix ending at the old breakpoint, 2 blocks before the
        # new one) are read; the rest up to the new breakpoint written; the tail is input.
        usage(50, read=1500, w5=700),
    ]
    assert cost(usage(50, read=1500, w5=700)) == 50 + 150 + 875


def test_a_miss_after_the_ttl_and_a_hit_refreshes_the_entry():
    request = user(text(1200, "a", EPHEMERAL), text(10, "b"))
    assert simulate([(0, request), (299, request), (598, request), (899, request)]) == [
        usage(10, w5=1200),
        usage(10, read=1200),  # a hit at 299 s renews the 5 minutes
        usage(10, read=1200),  # so 598 s is still a hit
        usage(10, w5=1200),  # 301 s after the last hit: expired, written again
    ]


def test_one_hour_entries_outlive_five_minutes_and_bill_twice():
    request = user(text(1200, "a", HOUR), text(10, "b"))
    assert simulate([(0, request), (3000, request), (6601, request)]) == [
        usage(10, w1=1200),
        usage(10, read=1200),
        usage(10, w1=1200),
    ]
    assert cost(usage(10, w1=1200)) == 10 + 2400


def test_the_lookback_reaches_20_blocks_before_a_breakpoint_and_no_further():
    head = [text(1100, "a", EPHEMERAL)]

    def grown(extra: int) -> dict[str, Any]:
        blocks = [text(1100, "a"), *(text(1, "x") for _ in range(extra - 1)), text(1, "y", EPHEMERAL)]
        return user(*blocks)

    # The old breakpoint is 20 blocks before the new one: found, read.
    assert simulate([(0, user(*head)), (1, grown(20))]) == [usage(0, w5=1100), usage(0, read=1100, w5=20)]
    # 21 blocks before: out of reach, the whole prefix is written again.
    assert simulate([(0, user(*head)), (1, grown(21))]) == [usage(0, w5=1100), usage(0, w5=1121)]
    # Another breakpoint close to the old entry rescues it.
    rescued = grown(21)
    rescued["messages"][0]["content"][5]["cache_control"] = dict(EPHEMERAL)
    assert simulate([(0, user(*head)), (1, rescued)])[1] == usage(0, read=1100, w5=21)


def test_below_the_minimum_length_nothing_is_cached():
    short = user(text(1000, "a", EPHEMERAL), text(10, "b"))
    assert simulate([(0, short), (10, short)]) == [usage(1010), usage(1010)]
    # A long enough later breakpoint caches the whole prefix up to it.
    longer = user(text(1000, "a", EPHEMERAL), text(100, "b", EPHEMERAL), text(10, "c"))
    assert simulate([(0, longer), (10, longer)]) == [usage(10, w5=1100), usage(10, read=1100)]
    assert simulate([(0, short), (10, short)], min_tokens=512) == [usage(10, w5=1000), usage(10, read=1000)]


def test_a_changed_block_breaks_the_prefix_from_there_on():
    before = user(text(1200, "a", EPHEMERAL), text(800, "b", EPHEMERAL))
    after = user(text(1200, "a", EPHEMERAL), text(800, "c", EPHEMERAL))
    assert simulate([(0, before), (5, after)]) == [usage(0, w5=2000), usage(0, read=1200, w5=800)]


def test_system_and_message_boundaries_are_part_of_the_prefix():
    sim = CacheSimulator()
    one = {"system": [text(1200, "s", EPHEMERAL)], "messages": [{"role": "user", "content": "hi"}]}
    assert sim.request(0, one)["cache_creation_input_tokens"] == 1200
    # The same text as a user message is another prompt.
    other = user(text(1200, "s", EPHEMERAL))
    assert sim.request(1, other)["cache_read_input_tokens"] == 0
    # A system string and a system text block are one prompt.
    assert sim.request(2, {**one, "system": " s" * 1200})["cache_read_input_tokens"] == 0
    assert sim.request(3, one)["cache_read_input_tokens"] == 1200


def test_the_ideal_reads_every_live_shared_prefix_and_writes_only_what_is_read_later():
    first = user(text(500, "a"), text(100, "b"))
    second = user(text(500, "a"), text(100, "b"), text(50, "c"))
    third = user(text(500, "a"), text(100, "b"), text(70, "d"))
    prices = ideal([(0, first), (10, second), (20, third), (400, third)], ttl_seconds=300)
    assert prices == [
        1.25 * 600,  # all of it is read by the next request
        0.1 * 600 + 50,  # read; "c" is never read again: plain input
        0.1 * 600 + 70,  # "d" would be read at 400 s, but the entry expired at 320 s
        670,
    ]


def test_an_entry_found_by_the_lookback_is_refreshed_too():
    head = user(text(1100, "a", EPHEMERAL))
    longer = user(text(1100, "a"), text(1, "x"), text(1, "y", EPHEMERAL))
    assert simulate([(0, head), (200, longer), (450, head)]) == [
        usage(0, w5=1100),
        usage(0, read=1100, w5=2),  # read 2 blocks before its breakpoint: renewed until 500 s
        usage(0, read=1100),  # 450 s after it was written, 250 s after that read
    ]


# ---------------------------------------------------------------- OpenAI GPT-5.6


def part(tokens: int, word: str = "a", mark: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "input_text", "text": f" {word}" * tokens}
    if mark:
        block["prompt_cache_breakpoint"] = {"mode": "explicit"}
    return block


def responses(*parts: dict[str, Any], explicit: bool = True) -> dict[str, Any]:
    request: dict[str, Any] = {"input": [{"role": "user", "content": list(parts)}]}
    if explicit:
        request["prompt_cache_options"] = {"mode": "explicit", "ttl": "30m"}
    return request


def read_written(usage: dict[str, Any]) -> tuple[int, int]:
    details = usage["input_tokens_details"]
    return details["cached_tokens"], details["cache_write_tokens"]


def test_openai_reads_only_at_a_repeated_breakpoint():
    first = responses(part(1500, "a", True), part(100, "b"))
    repeated = responses(part(1500, "a", True), part(100, "b"), part(600, "c", True))
    moved = responses(part(1500, "a"), part(100, "b"), part(600, "c", True))
    assert [read_written(u) for u in simulate_openai([(0, first), (60, repeated)])] == [
        (0, 1500),
        (1500, 700),
    ]
    # The cached prefix is still a prefix of the request, but no breakpoint repeats it: no read.
    assert [read_written(u) for u in simulate_openai([(0, first), (60, moved)])] == [(0, 1500), (0, 2200)]
    assert (
        openai_cost(simulate_openai([(0, first), (60, repeated)])[1])
        == 100 * 1.0 + 1500 * 0.1 + 700 * 1.25 - 100
    )


def test_openai_explicit_writes_the_latest_four_and_entries_live_thirty_minutes():
    parts = [part(300, w, True) for w in "abcdef"]
    (usage,) = simulate_openai([(0, responses(*parts))])
    assert read_written(usage) == (0, 1800)
    early = responses(*[part(300, w, w == "b") for w in "ab"])  # block b: not among the latest four
    late = responses(*[part(300, w, w == "d") for w in "abcd"])
    run = simulate_openai([(0, responses(*parts)), (60, early), (120, late), (1919, late), (3720, late)])
    assert [read_written(u)[0] for u in run[1:]] == [0, 1200, 1200, 0]  # refreshed at 1919, gone at 3720


def test_openai_implicit_mode_breaks_only_at_the_newest_input_message():
    first = responses(part(1500, "a"), explicit=False)
    same = responses(part(1500, "a"), explicit=False)
    longer = responses(part(1500, "a"), part(100, "b"), explicit=False)
    assert [read_written(u) for u in simulate_openai([(0, first), (5, same), (10, longer)])] == [
        (0, 1500),
        (1500, 0),
        (0, 1600),  # the implicit breakpoint moved with the new content: nothing repeats it
    ]


def test_stripping_the_breakpoints_leaves_the_content():
    request = responses(part(10, "a", True))
    assert without_breakpoints(request) == {"input": [{"role": "user", "content": [part(10, "a")]}]}
