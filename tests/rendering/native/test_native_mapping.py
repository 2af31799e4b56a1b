"""The native formats' mapping rules on small hand-built timelines."""

from __future__ import annotations

import json

import pytest

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native.tool_names import NAME_PATTERN, provider_tool_name, timeline_tool_name
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window


class Stream:
    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, tokens: int = 10, **fields: object) -> Block:
        block = Block(seq=len(self.blocks) + 1, tokens=tokens, **fields)  # type: ignore[arg-type]
        self.blocks.append(block)
        return block

    def turn(self, tid: str, prompt: str = "hi") -> None:
        self.add(type=b.TURN_HEADER, turn_id=tid, ts="2026-01-01T00:00:00Z", path=b.turn_header_path(tid))
        self.add(type=b.USER_PROMPT, turn_id=tid, author="user", text=prompt, path=b.user_prompt_path(tid))

    def call(self, tid: str, cid: str, tool: str = "web_tools.web_search", tokens: int = 10) -> None:
        text = json.dumps({"tool_id": tool, "tool_call_id": cid, "params": {"q": cid}})
        self.add(
            type=b.TOOL_CALL,
            turn_id=tid,
            text=text,
            path=b.tool_call_path(tid, cid),
            meta={"tool_call_id": cid},
            tokens=tokens,
        )

    def result(self, tid: str, cid: str, text: str = "ok", status: str = "ok") -> None:
        meta = {"tool_call_id": cid, "status": status}
        self.add(type=b.TOOL_RESULT, turn_id=tid, text=text, path=b.tool_result_path(tid, cid), meta=meta)


def render(blocks: list[Block], fmt: str = "anthropic_messages", **settings: object) -> dict:
    rendered = render_window(
        blocks,
        settings=RenderSettings(**{"cache_min_tokens": 0, **settings}),  # type: ignore[arg-type]
        options=RenderOptions(format=fmt),  # type: ignore[arg-type]
    )
    assert rendered.request is not None
    assert violations(fmt, rendered.request) == []
    return rendered.request


def test_parallel_calls_with_results_out_of_order_are_answered_in_call_order() -> None:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    s.call("t1", "tc_b")
    s.result("t1", "tc_b", "B")
    s.result("t1", "tc_a", "A")
    messages = render(s.blocks)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [c["id"] for c in messages[1]["content"]] == ["tc_a", "tc_b"]
    results = messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["tc_a", "tc_b"]
    assert results[0]["content"][0]["text"].endswith("A")


def test_a_call_without_stored_result_gets_a_synthetic_error_result() -> None:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    for fmt in ("anthropic_messages", "openai_responses", "openai_chat"):
        text = json.dumps(render(s.blocks, fmt))
        assert "no result stored for tool call tc_a" in text
    result = render(s.blocks)["messages"][2]["content"][0]
    assert result["is_error"] is True


def test_a_result_whose_call_is_not_in_the_window_is_user_text() -> None:
    s = Stream()
    s.turn("t1")
    s.result("t1", "tc_gone", "late")
    messages = render(s.blocks)["messages"]
    assert len(messages) == 1
    assert all(c["type"] == "text" for c in messages[0]["content"])
    assert "tc_gone" in messages[0]["content"][-1]["text"]


def test_an_error_result_is_marked_is_error() -> None:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    s.result("t1", "tc_a", "boom", status="error")
    assert render(s.blocks)["messages"][2]["content"][0]["is_error"] is True


def test_a_hidden_call_keeps_its_pair_and_shows_its_replacement_text() -> None:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    s.result("t1", "tc_a")
    s.blocks[2] = s.blocks[2].hide(
        replacement_text="[hidden: too long]", reason="agent", replacement_tokens=3
    )
    messages = render(s.blocks)["messages"]
    assistant = messages[1]["content"]
    assert "[hidden: too long]" in assistant[0]["text"]
    assert assistant[1]["type"] == "tool_use" and assistant[1]["id"] == "tc_a"
    assert messages[2]["content"][0]["tool_use_id"] == "tc_a"


def test_a_reused_tool_call_id_becomes_unique_in_the_request() -> None:
    s = Stream()
    s.turn("t1")
    s.call("t1", "tc_a")
    s.result("t1", "tc_a")
    s.call("t1", "tc_a")
    s.result("t1", "tc_a")
    messages = render(s.blocks)["messages"]
    assert [messages[1]["content"][0]["id"], messages[3]["content"][0]["id"]] == ["tc_a", "tc_a-r2"]
    assert messages[4]["content"][0]["tool_use_id"] == "tc_a-r2"


@pytest.mark.parametrize(
    "name", ["web_tools.web_search", "get_weather", "fs-read", "outil_récupérer", "x" * 64, "a.b" * 40]
)
def test_tool_names_map_to_the_provider_pattern_and_back(name: str) -> None:
    mapped = provider_tool_name(name)
    assert NAME_PATTERN.match(mapped)
    assert timeline_tool_name(mapped, declared=["other", name]) == name


def test_a_plain_tool_name_is_unchanged_and_a_dotted_one_is_escaped() -> None:
    assert provider_tool_name("get_weather") == "get_weather"
    assert provider_tool_name("web_tools.web_search") == "web_tools-2eweb_search"
    assert provider_tool_name("fs-read") == "fs-2dread"


def _turns(n: int, tokens: int) -> list[Block]:
    s = Stream()
    for t in range(n):
        tid = f"t{t}"
        s.turn(tid)
        s.call(tid, f"tc_{t}", tokens=tokens)
        s.result(tid, f"tc_{t}")
        s.add(type=b.ASSISTANT_COMPLETION, turn_id=tid, text="done", path=b.completion_path(tid))
    return s.blocks


def _markers(request: dict) -> list[dict]:
    blocks = [*request.get("system", []), *(c for m in request["messages"] for c in m["content"])]
    return [c["cache_control"] for c in blocks if "cache_control" in c]


def test_cache_markers_sit_on_native_blocks_with_the_hour_ttl_when_the_ttl_is_an_hour() -> None:
    request = render(_turns(8, 400), cache_ttl_seconds=3600)
    markers = _markers(request)
    assert 1 <= len(markers) <= 4
    assert markers == [{"type": "ephemeral", "ttl": "1h"}] * len(markers)
    short = _markers(render(_turns(8, 400), cache_ttl_seconds=300))
    assert short == [{"type": "ephemeral"}] * len(short)


def test_no_cache_marker_on_a_prefix_shorter_than_cache_min_tokens() -> None:
    blocks = _turns(8, 10)
    assert _markers(render(blocks, cache_min_tokens=0))
    assert _markers(render(blocks, cache_min_tokens=100_000)) == []


def test_the_system_prompt_is_the_top_level_system_with_its_own_marker() -> None:
    rendered = render_window(
        _turns(8, 400),
        settings=RenderSettings(cache_min_tokens=1024),
        options=RenderOptions(format="anthropic_messages", system_text="You are an agent."),
        system_tokens=2000,
    )
    assert rendered.request is not None
    assert rendered.request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert len(_markers(rendered.request)) <= 4
    assert violations("anthropic_messages", rendered.request) == []


@pytest.mark.parametrize("fmt", ["anthropic_messages", "openai_responses", "openai_chat"])
def test_a_call_stored_as_its_bare_input_renders_that_input(fmt: str) -> None:
    """An agent that stores ``json.dumps(tool_use.input)`` with the tool's name in
    meta: the native call carries that input (it rendered ``{}`` before)."""
    s = Stream()
    s.turn("t1")
    s.add(
        type=b.TOOL_CALL,
        turn_id="t1",
        text=json.dumps({"order": "1234"}),
        path=b.tool_call_path("t1", "tc_a"),
        meta={"tool_call_id": "tc_a", "tool_id": "lookup_order"},
    )
    s.result("t1", "tc_a", '{"status": "delivered"}')
    request = render(s.blocks, fmt)
    text = json.dumps(request)
    assert "lookup_order" in text
    if fmt == "anthropic_messages":
        call = request["messages"][1]["content"][0]
        assert call["input"] == {"order": "1234"}
    elif fmt == "openai_responses":
        call = next(item for item in request["input"] if item.get("type") == "function_call")
        assert json.loads(call["arguments"]) == {"order": "1234"}
    else:
        call = next(m for m in request["messages"] if m.get("tool_calls"))["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"order": "1234"}


def test_a_call_in_the_envelope_without_params_has_no_input() -> None:
    s = Stream()
    s.turn("t1")
    s.add(
        type=b.TOOL_CALL,
        turn_id="t1",
        text=json.dumps({"tool_id": "web_tools.web_search"}),
        path=b.tool_call_path("t1", "tc_a"),
        meta={"tool_call_id": "tc_a"},
    )
    s.result("t1", "tc_a")
    assert render(s.blocks)["messages"][1]["content"][0]["input"] == {}
