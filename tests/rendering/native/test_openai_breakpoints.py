"""GPT-5.6 explicit cache breakpoints in ``openai_responses`` and ``openai_chat``: the request
options, where the markers go, and that the next request repeats the last one's breakpoints."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.rendering.native.test_native_mapping import Stream
from timeline_app.domain import blocks as b
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import Block, is_turn_start
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native.conversation import MISSING_RESULT
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.sdk_types import sdk_type_errors
from timeline_bench.timelines import random_timeline, with_thinking

OPENAI_FORMATS = ("openai_responses", "openai_chat")
GPT_56 = ("30m", "12h")
BREAKPOINT = "prompt_cache_breakpoint"
SYNTHETIC = MISSING_RESULT.split("{", 1)[0]


def _render(
    blocks: list[Block],
    fmt: str,
    *,
    ttls: tuple[str, ...] = GPT_56,
    system: str = "You are an agent.",
    **overrides: Any,
) -> dict[str, Any]:
    rendered = render_window(
        blocks,
        settings=RenderSettings(**{"cache_min_tokens": 0, **overrides}),  # type: ignore[arg-type]
        options=RenderOptions(format=fmt, system_text=system, cache_breakpoint_ttls=ttls),  # type: ignore[arg-type]
        system_tokens=1500 if system else 0,
    )
    assert rendered.request is not None
    assert violations(fmt, rendered.request) == [], stable_json(rendered.request)[:3000]
    assert sdk_type_errors(fmt, rendered.request) == []
    return rendered.request


def _items(fmt: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    return request["input"] if fmt == "openai_responses" else request["messages"]


def _parts(item: dict[str, Any]) -> list[Any]:
    parts = item.get("output") if item.get("type") == "function_call_output" else item.get("content")
    return parts if isinstance(parts, list) else []


def _marked(fmt: str, request: dict[str, Any]) -> list[tuple[int, int]]:
    """(item, part) of every part carrying a breakpoint, in request order."""
    return [
        (i, p)
        for i, item in enumerate(_items(fmt, request))
        for p, part in enumerate(_parts(item))
        if isinstance(part, dict) and BREAKPOINT in part
    ]


def _two_turns() -> Stream:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    s.call("t1", "tc_b")
    s.result("t1", "tc_a")
    s.result("t1", "tc_b")
    s.add(type=b.ASSISTANT_COMPLETION, turn_id="t1", author="assistant", text="done")
    s.turn("t2", "next")
    s.call("t2", "tc_c")
    s.result("t2", "tc_c")
    return s


@pytest.mark.parametrize("fmt", OPENAI_FORMATS)
def test_a_gpt_56_render_asks_for_explicit_caching_and_marks_input_parts_only(fmt: str) -> None:
    request = _render(_two_turns().blocks, fmt)
    assert request["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}
    assert "prompt_cache_retention" not in request
    items = _items(fmt, request)
    # The system prompt is the stable head: a message whose part carries the first breakpoint.
    assert items[0]["role"] == "system" and BREAKPOINT in items[0]["content"][-1]
    assert "instructions" not in request
    for item in items:
        if item.get("type") in ("function_call", "reasoning") or item.get("role") == "assistant":
            assert BREAKPOINT not in json.dumps(item), item
    # The tail (the last result) and the end of the first turn's results carry one each.
    assert len(_marked(fmt, request)) >= 3
    last_item, last_part = _marked(fmt, request)[-1]
    assert "tc:t2.tc_c.result" in json.dumps(_parts(items[last_item])[last_part])


@pytest.mark.parametrize("fmt", OPENAI_FORMATS)
@pytest.mark.parametrize(
    ("ttl_seconds", "ttls", "expected"),
    [
        (3599, GPT_56, "30m"),
        (3600, GPT_56, "12h"),
        (86_400, ("30m",), "30m"),  # the model does not allow 12 hours
    ],
)
def test_the_cache_ttl_is_12h_from_an_hour_when_the_model_allows_it(
    fmt: str, ttl_seconds: int, ttls: tuple[str, ...], expected: str
) -> None:
    """Chat Completions takes 30 minutes only (its SDK's ``PromptCacheOptions.ttl``)."""
    expected = expected if fmt == "openai_responses" else "30m"
    request = _render(_two_turns().blocks, fmt, ttls=ttls, cache_ttl_seconds=ttl_seconds)
    assert request["prompt_cache_options"] == {"mode": "explicit", "ttl": expected}
    # The breakpoints inherit the request's TTL.
    assert all(
        _parts(_items(fmt, request)[i])[p][BREAKPOINT] == {"mode": "explicit"}
        for i, p in _marked(fmt, request)
    )


@pytest.mark.parametrize("fmt", OPENAI_FORMATS)
def test_an_older_model_gets_neither_field_and_the_history_as_before(fmt: str) -> None:
    request = _render(_two_turns().blocks, fmt, ttls=())
    text = json.dumps(request)
    assert "prompt_cache_options" not in request and BREAKPOINT not in text
    if fmt == "openai_responses":
        assert request["instructions"] == "You are an agent."
        outputs = [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]
        assert all(isinstance(o, str) for o in outputs)
    else:
        assert request["messages"][0] == {"role": "system", "content": "You are an agent."}


@pytest.mark.parametrize("fmt", OPENAI_FORMATS)
def test_no_breakpoint_below_the_minimum_cacheable_prefix(fmt: str) -> None:
    request = _render(_two_turns().blocks, fmt, cache_min_tokens=100_000)
    assert _marked(fmt, request) == []
    assert request["prompt_cache_options"]["mode"] == "explicit"


def _turn_starts(blocks: list[Block]) -> list[int]:
    return [
        k
        for k in range(1, len(blocks))
        if is_turn_start(blocks[k])
        and (blocks[k].turn_id != blocks[k - 1].turn_id or blocks[k].type == b.TURN_HEADER)
    ]


@settings(max_examples=examples(300), deadline=None, database=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), pick=st.integers(min_value=0))
def test_appending_a_turn_repeats_the_last_breakpoint_byte_for_byte(seed: int, pick: int) -> None:
    """The earlier request up to and including its last breakpoint is the new request's prefix,
    markers included, and the new request carries a breakpoint at that same part."""
    blocks = random_timeline(random.Random(seed))
    if seed % 2:
        blocks = with_thinking(random.Random(seed ^ 0x5EED), blocks)
    starts = _turn_starts(blocks)
    assume(starts)
    cut = starts[pick % len(starts)]
    following = next((k for k in starts if k > cut), len(blocks))
    for fmt in OPENAI_FORMATS:
        before = _render(blocks[:cut], fmt)
        assume(SYNTHETIC not in json.dumps(before))  # a pending call's result may still arrive
        after = _render(blocks[:following], fmt)
        marked = _marked(fmt, before)
        assume(marked)
        item, part = marked[-1]
        old, new = _items(fmt, before), _items(fmt, after)
        assert [stable_json(m) for m in new[:item]] == [stable_json(m) for m in old[:item]], fmt
        head = {k: v for k, v in old[item].items() if k not in ("content", "output")}
        assert {k: v for k, v in new[item].items() if k not in ("content", "output")} == head
        assert stable_json(_parts(new[item])[: part + 1]) == stable_json(_parts(old[item])[: part + 1])
        assert (item, part) in _marked(fmt, after), fmt
        assert after["prompt_cache_options"] == before["prompt_cache_options"]
