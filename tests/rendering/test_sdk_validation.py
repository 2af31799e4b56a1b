"""Rendered parts and messages validate against the provider SDKs' request types.

The SDK types are TypedDicts; pydantic ignores unknown keys on them, so each check also asserts
that validation round-trips to the same value (an unknown or misspelled key would be dropped).
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pydantic
import pytest

from tests.builders import PDF_B64, PNG_B64, Stream
from timeline_app.domain.blocks import PLAN, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.formats import Source
from timeline_app.rendering.pipeline import RenderOptions, render_window

ANTHROPIC_PARTS = pydantic.TypeAdapter(list[anthropic.types.ContentBlockParam])
ANTHROPIC_MESSAGE = pydantic.TypeAdapter(anthropic.types.MessageParam)
OPENAI_MESSAGES = pydantic.TypeAdapter(list[openai.types.chat.ChatCompletionMessageParam])
OPENAI_PARTS = pydantic.TypeAdapter(list[openai.types.chat.ChatCompletionContentPartParam])


def _rich_stream() -> Stream:
    s = Stream()
    s.summary("t0", ["a", "b"], meta={"split_turn_id": "t0"})
    s.turn("t0", calls=2)
    s.header("t1")
    s.prompt("t1", "Could you find top 3 places to eat here in Wuppertal?")
    s.attachment("t1", "photo.png", "image/png", PNG_B64, meta={"summary": "a photo"})
    s.attachment(
        "t1", "menu.pdf", "application/pdf", PDF_B64, meta={"physical_path": "t1/attachments/menu.pdf"}
    )
    s.attachment("t1", "raw.bin", "application/octet-stream", "AAAA")
    s.attachment("t1", "icon.bmp", "image/bmp", "Qk0=")
    s.tool_round("t1", "tc_1")
    s.blocks[3] = s.blocks[3].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=2)
    return s


def _render(fmt: str) -> list[dict[str, Any]]:
    options = RenderOptions(
        format=fmt,  # type: ignore[arg-type]
        include_sources=True,
        include_announce=True,
        announce=("budget: 2 tool calls left",),
    )
    rendered = render_window(
        _rich_stream().blocks,
        settings=RenderSettings(),
        options=options,
        sources=(Source(sid=1, url="https://a.example", title="A", text="alpha"),),
        active_plan=Block(seq=99, type=PLAN, turn_id="t1", path="ar:t1.react.plan", text="1. search"),
    )
    return rendered.blocks


@pytest.mark.parametrize("fmt", ["anthropic", "text"])
def test_anthropic_and_text_parts_are_valid_content_block_params(fmt: str) -> None:
    parts = _render(fmt)
    assert ANTHROPIC_PARTS.validate_python(parts) == parts
    message = {"role": "user", "content": parts}
    validated = ANTHROPIC_MESSAGE.validate_python(message)
    assert validated["role"] == "user"
    assert list(validated["content"]) == parts  # type: ignore[arg-type]


def test_anthropic_parts_use_only_accepted_binary_media_types() -> None:
    parts = _render("anthropic")
    media = [p["source"]["media_type"] for p in parts if p["type"] in ("image", "document")]
    assert media == ["image/png", "application/pdf"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert any(t.startswith("<document media_type=application/octet-stream") for t in texts)
    assert any(t.startswith("<image media_type=image/bmp") for t in texts)


def test_anthropic_has_at_most_three_cache_controls() -> None:
    parts = _render("anthropic")
    assert 1 <= sum("cache_control" in p for p in parts) <= 3


def test_openai_messages_are_valid_chat_completion_message_params() -> None:
    messages = _render("openai")
    validated = OPENAI_MESSAGES.validate_python(messages)
    assert len(validated) == len(messages)
    for original, checked in zip(messages, validated, strict=True):
        assert checked["role"] == original["role"]
        content = original["content"]
        if isinstance(content, list):
            assert list(checked["content"]) == content  # type: ignore[arg-type, typeddict-item]
            assert OPENAI_PARTS.validate_python(content) == content
    kinds = [p["type"] for m in messages for p in m["content"]]
    assert kinds.count("image_url") == 1 and kinds.count("file") == 1


def test_openai_stored_messages_pass_validation() -> None:
    s = Stream()
    s.header("t0")
    s.add("openai.message", "t0", meta={"openai_message": {"role": "system", "content": "be brief"}})
    s.add(
        "openai.message",
        "t0",
        meta={
            "openai_message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
                ],
            }
        },
    )
    s.add(
        "openai.message",
        "t0",
        meta={"openai_message": {"role": "tool", "tool_call_id": "call_1", "content": "ok"}},
    )
    s.prompt("t0")
    rendered = render_window(s.blocks, settings=RenderSettings(), options=RenderOptions(format="openai"))
    assert [m["role"] for m in rendered.blocks] == ["user", "system", "assistant", "tool", "user"]
    OPENAI_MESSAGES.validate_python(rendered.blocks)
