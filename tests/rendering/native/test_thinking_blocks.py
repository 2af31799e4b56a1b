"""Thinking blocks (``react.thinking``) come back unchanged, in place, in their provider's native
format: Anthropic's signed ``thinking`` / ``redacted_thinking`` first in the assistant message of
its round (before the ``tool_use``), never with a cache marker; OpenAI's ``reasoning`` item before
its function call in the Responses input; Gemini's thought parts and signatures on their parts.
The other native formats keep only their readable text (and cost only that); the seed formats
leave them out, and they cost nothing there."""

from __future__ import annotations

import json
from typing import Any

import pytest

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.native import NATIVE_FORMATS
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.sdk_types import sdk_type_errors

SIGNED = {"provider": "anthropic", "kind": "thinking", "signature": "EqQBCkgIARABGAIiQL+sig=="}
REDACTED = {"provider": "anthropic", "kind": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
REASONING = {
    "provider": "openai",
    "kind": "reasoning",
    "id": "rs_0123",
    "summary": [{"type": "summary_text", "text": "**Looking the order up**"}],
    "encrypted_content": "gAAAAABpF-encrypted",
}
THOUGHT = {"provider": "google", "kind": "thought", "signature": "Q2lJQkRHZW1pbmlUaG91Z2h0"}
SIGNATURE = {"provider": "google", "kind": "signature", "signature": "Q2lJQkRHZW1pbmlDYWxs"}
OWN_FORMAT = {"anthropic": "anthropic_messages", "openai": "openai_responses", "google": "gemini_contents"}
# What only the provider's own format may carry of each (its opaque part).
OPAQUE = {
    "thinking": SIGNED["signature"],
    "redacted_thinking": REDACTED["data"],
    "reasoning": "gAAAAABpF-encrypted",
    "thought": THOUGHT["signature"],
    "signature": SIGNATURE["signature"],
}


def _block(seq: int, type: str, text: str = "", **fields: Any) -> Block:
    block = Block(seq=seq, type=type, turn_id="turn_1", text=text, **fields)
    return Block(**{**block.__dict__, "tokens": block_tokens(block)})


def _timeline(thinking_meta: dict[str, Any], *, text: str = "", notes_first: bool = False) -> list[Block]:
    """A turn whose first round is a thinking block, the model's text, two parallel calls and
    their results, then a final answer."""
    thinking = _block(
        3,
        b.THINKING,
        text if thinking_meta["kind"] in ("thinking", "thought") else "",
        author="assistant",
        meta=thinking_meta,
    )
    notes = _block(4, b.NOTES, "I will look order 1001 up.", author="react")
    calls = [
        _block(
            5 + k,
            b.TOOL_CALL,
            json.dumps({"tool_id": "orders.lookup", "params": {"order": 1001 + k}}),
            author="react",
            mime="application/json",
            meta={"tool_call_id": f"toolu_{k}"},
        )
        for k in range(2)
    ]
    results = [
        _block(
            7 + k,
            b.TOOL_RESULT,
            f"order {1001 + k}: in transit",
            author="tool",
            meta={"tool_call_id": f"toolu_{k}"},
        )
        for k in range(2)
    ]
    first = [notes, thinking] if notes_first else [thinking, notes]
    return [
        _block(
            1, b.TURN_HEADER, author="system", ts="2026-01-01T00:00:00Z", path=b.turn_header_path("turn_1")
        ),
        _block(2, b.USER_PROMPT, "Where is order 1001?", author="user", path=b.user_prompt_path("turn_1")),
        *first,
        *calls,
        *results,
    ]


def _render(blocks: list[Block], fmt: str, **settings: Any) -> Any:
    return render_window(
        blocks,
        settings=RenderSettings(**{"cache_min_tokens": 0, **settings}),
        options=RenderOptions(format=fmt),  # type: ignore[arg-type]
    )


def _valid(fmt: str, request: dict[str, Any]) -> None:
    assert violations(fmt, request) == []
    assert sdk_type_errors(fmt, request) == []


@pytest.mark.parametrize("notes_first", [False, True])
def test_anthropic_thinking_comes_back_first_in_its_assistant_message_with_its_signature(notes_first):
    blocks = _timeline(SIGNED, text="The user wants order 1001. Look it up.", notes_first=notes_first)
    request = _render(blocks, "anthropic_messages").request
    _valid("anthropic_messages", request)
    assistant = request["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants order 1001. Look it up.",
        "signature": SIGNED["signature"],
    }
    assert [part["type"] for part in assistant["content"]] == ["thinking", "text", "tool_use", "tool_use"]


def test_redacted_thinking_comes_back_unchanged():
    request = _render(_timeline(REDACTED), "anthropic_messages").request
    _valid("anthropic_messages", request)
    assert request["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": REDACTED["data"]}


def test_an_openai_reasoning_item_comes_back_before_its_following_items_in_the_responses_input():
    request = _render(_timeline(REASONING), "openai_responses").request
    _valid("openai_responses", request)
    kinds = [item.get("type") or item["role"] for item in request["input"]]
    assert kinds == [
        "user",
        "reasoning",
        "assistant",
        "function_call",
        "function_call",
        *["function_call_output"] * 2,
    ]
    assert request["input"][1] == {
        "type": "reasoning",
        "id": "rs_0123",
        "summary": [{"type": "summary_text", "text": "**Looking the order up**"}],
        "encrypted_content": "gAAAAABpF-encrypted",
    }


def test_a_reasoning_item_without_a_following_item_is_left_out():
    blocks = _timeline(REASONING)[:3]  # header, prompt, the reasoning item: nothing follows it
    request = _render(blocks, "openai_responses").request
    _valid("openai_responses", request)
    assert "reasoning" not in json.dumps(request)


@pytest.mark.parametrize("meta", [SIGNED, REDACTED, REASONING, THOUGHT, SIGNATURE])
def test_thinking_comes_back_whole_in_its_format_as_readable_text_in_the_others_and_not_in_seed_ones(meta):
    """The provider switch for one block: its own format carries its opaque part; every other
    native format only its readable text (and counts only that); the seed formats nothing."""
    with_thinking = _timeline(meta, text="secret chain of thought")
    without = [block for block in with_thinking if block.type != b.THINKING]
    thinking = next(block for block in with_thinking if block.type == b.THINKING)
    readable = {
        "thinking": "secret chain of thought",
        "thought": "secret chain of thought",
        "reasoning": "**Looking the order up**",
    }.get(meta["kind"], "")
    own = OWN_FORMAT[meta["provider"]]
    assert thinking.tokens > 0 or meta["kind"] == "signature"
    for fmt in (*NATIVE_FORMATS, "anthropic", "openai", "text"):
        rendered = _render(with_thinking, fmt)
        text = json.dumps(rendered.blocks) + json.dumps(rendered.request)
        tokens = rendered.tokens["visible"]
        bare = _render(without, fmt).tokens["visible"]
        if fmt == own:
            assert tokens == bare + thinking.tokens
            assert OPAQUE[meta["kind"]] in text
            if readable:
                assert readable in text
        elif fmt in NATIVE_FORMATS:
            assert OPAQUE[meta["kind"]] not in text, fmt
            assert '"thought": true' not in text and "redacted_thinking" not in text, fmt
            assert '"reasoning"' not in text and '"type": "thinking"' not in text, fmt
            assert (readable in text) if readable else True, fmt
            assert tokens == bare + count_text_tokens(readable), fmt
        else:
            assert tokens == bare, fmt
            for marker in ("secret chain", "Looking the order up", OPAQUE[meta["kind"]], "react.thinking"):
                assert marker not in text, (fmt, marker)
        if fmt in NATIVE_FORMATS:
            _valid(fmt, rendered.request)


def test_a_hidden_thinking_block_is_left_out_everywhere():
    blocks = _timeline(SIGNED, text="hidden thoughts")
    blocks = [
        blk.hide(replacement_text="[x]", reason="agent", replacement_tokens=1)
        if blk.type == b.THINKING
        else blk
        for blk in blocks
    ]
    request = _render(blocks, "anthropic_messages").request
    _valid("anthropic_messages", request)
    assert "thinking" not in json.dumps(request)


def test_no_cache_marker_lands_on_a_thinking_block():
    # The tail cache point falls on the last block: a thinking block stored after the results
    # (the next round's, before its call is stored). Its marker goes to the block before it.
    blocks = [
        *_timeline(SIGNED, text="first"),
        _block(9, b.THINKING, "second", author="assistant", meta=SIGNED),
    ]
    rendered = _render(blocks, "anthropic_messages")
    request = rendered.request
    _valid("anthropic_messages", request)
    parts = [(m["role"], part) for m in request["messages"] for part in m["content"]]
    assert not [part for _, part in parts if part["type"] == "thinking" and "cache_control" in part]
    marked = [part for _, part in parts if "cache_control" in part]
    assert marked, "the tail point moved to the nearest block that can carry it"
    assert marked[-1]["type"] == "tool_result"
    assert rendered.marked_seqs[-1] == 8


def test_the_validator_rejects_a_marker_on_thinking_and_thinking_after_other_content():
    request = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "let me think"},
                    {
                        "type": "thinking",
                        "thinking": "t",
                        "signature": "s",
                        "cache_control": {"type": "ephemeral"},
                    },
                ],
            },
        ]
    }
    problems = violations("anthropic_messages", request)
    assert any("cache_control on a thinking block" in p for p in problems)
    assert any("after other content" in p for p in problems)


def test_ttl_pruning_never_hides_a_thinking_block():
    from datetime import UTC, datetime, timedelta

    from timeline_app.rendering.ttl import BULKY_TOKENS, plan_ttl_pruning

    old = _timeline(SIGNED, text="long thoughts " * 800)
    thinking = next(block for block in old if block.type == b.THINKING)
    assert thinking.tokens > BULKY_TOKENS
    newer = [
        Block(**{**blk.__dict__, "seq": blk.seq + 100, "turn_id": "turn_2"}) for blk in _timeline(SIGNED)
    ]
    now = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    decision = plan_ttl_pruning(
        [*old, *newer],
        now=now,
        last_touch=now - timedelta(hours=1),
        settings=RenderSettings(cache_ttl_seconds=300, ttl_keep_recent_turns=1),
    )
    assert decision.status == "pruned"
    assert thinking.seq not in {hide.seq for hide in decision.hides}
    assert {hide.seq for hide in decision.hides} == {7, 8}, "the old turn's results are pruned"


def test_the_native_renderer_itself_sends_back_only_its_providers_opaque_parts():
    from timeline_app.rendering.native import render_native

    anthropic_thinking = _timeline(SIGNED, text="claude thoughts")
    reasoning = _block(4, b.THINKING, author="assistant", meta=REASONING)
    blocks = [*anthropic_thinking[:3], reasoning, *anthropic_thinking[3:]]
    for fmt, opaque, left_out in (
        ("anthropic_messages", [SIGNED["signature"]], ["rs_0123", "gAAAAABpF"]),
        ("openai_responses", ["rs_0123", "gAAAAABpF"], [SIGNED["signature"]]),
        ("openai_chat", [], ["rs_0123", "gAAAAABpF", SIGNED["signature"]]),
        ("gemini_contents", [], ["rs_0123", "gAAAAABpF", SIGNED["signature"]]),
    ):
        request = render_native(blocks, format=fmt).request
        _valid(fmt, request)
        text = json.dumps(request)
        assert all(marker in text for marker in opaque), fmt
        assert not any(marker in text for marker in left_out), fmt
        # The readable text of both stays in every native format.
        assert "claude thoughts" in text and "Looking the order up" in text, fmt
