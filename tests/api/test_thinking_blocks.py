"""``react.thinking`` over HTTP: every write path refuses a bad shape (400, one error shape,
nothing stored); a render in the provider's native format sends the block back first in its
assistant message with its signature; other formats leave it out; a compaction removes it with its
turn and never puts its text in the summary."""

from __future__ import annotations

import json

import pytest

from timeline_app.models import Block

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"
BASE = f"{C}/c1"
SIGNATURE = "EqQBCkgIARABGAIiQL-signature=="


def _thinking(turn: str, text: str, **meta) -> dict:
    return {
        "type": "react.thinking",
        "author": "assistant",
        "turn_id": turn,
        "text": text,
        "meta": {"provider": "anthropic", "kind": "thinking", "signature": f"{SIGNATURE}{turn}", **meta},
    }


def _round(owner, turn: str, *, thinking: str, result_words: int = 20) -> None:
    """One turn as an agent with extended thinking stores it: the reply (thinking, text, a call),
    the tool's result, then the answer."""
    assert owner.post(f"{BASE}/turns/", {"turn_id": turn, "prompt": f"question of {turn}"}).status_code == 201
    call_id = f"toolu_{turn}"
    blocks = [
        _thinking(turn, thinking),
        {"type": "react.notes", "author": "react", "turn_id": turn, "text": "Looking it up."},
        {
            "type": "react.tool.call",
            "author": "react",
            "turn_id": turn,
            "mime": "application/json",
            "text": json.dumps({"tool_id": "orders.lookup", "params": {"order": turn}}),
            "meta": {"tool_call_id": call_id},
        },
        {
            "type": "react.tool.result",
            "author": "tool",
            "turn_id": turn,
            "text": " ".join(f"line{k} of {turn}" for k in range(result_words)),
            "meta": {"tool_call_id": call_id},
        },
    ]
    answer = owner.post(f"{BASE}/blocks/", {"blocks": blocks})
    assert answer.status_code == 201, answer.content


BAD = [
    ({"meta": {"kind": "thinking", "signature": "s"}}, "blocks[0].meta.provider"),
    ({"meta": {"provider": "mistral", "kind": "thinking"}}, "blocks[0].meta.provider"),
    ({"meta": {"provider": "google", "kind": "thinking"}}, "blocks[0].meta.kind"),
    ({"meta": {"provider": "google", "kind": "signature"}}, "blocks[0].meta.signature"),
    (
        {"meta": {"provider": "google", "kind": "signature", "signature": "not base64!"}},
        "blocks[0].meta.signature",
    ),
    (
        {"text": "x", "meta": {"provider": "google", "kind": "signature", "signature": "c2ln"}},
        "blocks[0].text",
    ),
    (
        {"text": "t", "meta": {"provider": "google", "kind": "thought", "signature": 5}},
        "blocks[0].meta.signature",
    ),
    ({"meta": {"provider": "google", "kind": "thought"}}, "blocks[0].text"),
    ({"meta": {"provider": "anthropic", "kind": "reasoning"}}, "blocks[0].meta.kind"),
    ({"meta": {"provider": "anthropic", "kind": "thinking"}}, "blocks[0].meta.signature"),
    ({"meta": {"provider": "anthropic", "kind": "thinking", "signature": ""}}, "blocks[0].meta.signature"),
    ({"meta": {"provider": "anthropic", "kind": "redacted_thinking"}}, "blocks[0].meta.data"),
    (
        {"text": "x", "meta": {"provider": "anthropic", "kind": "redacted_thinking", "data": "d"}},
        "blocks[0].text",
    ),
    ({"meta": {"provider": "openai", "kind": "reasoning", "summary": []}}, "blocks[0].meta.id"),
    ({"meta": {"provider": "openai", "kind": "reasoning", "id": "rs_1"}}, "blocks[0].meta.summary"),
    (
        {"meta": {"provider": "openai", "kind": "reasoning", "id": "rs_1", "summary": [{"text": "t"}]}},
        "blocks[0].meta.summary[0]",
    ),
    (
        {
            "meta": {
                "provider": "openai",
                "kind": "reasoning",
                "id": "rs_1",
                "summary": [],
                "encrypted_content": 5,
            }
        },
        "blocks[0].meta.encrypted_content",
    ),
    ({"author": "user"}, "blocks[0].author"),
    ({"base64": "aGVsbG8=", "mime": "text/plain"}, "blocks[0].base64"),
]


@pytest.mark.parametrize(("change", "where"), BAD)
def test_a_bad_thinking_block_is_400_and_stores_nothing(owner, conversation, change, where):
    good = {"type": "react.tool.call", "text": "{}", "meta": {"tool_call_id": "tc_ok"}}
    bad = {**_thinking("turn_1", ""), **change}
    answer = owner.post(f"{BASE}/blocks/", {"blocks": [bad, good]})
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["code"] and error["message"] and where in error["details"], error
    assert not Block.objects.filter(conversation=conversation).exists()


def test_an_import_with_a_bad_thinking_block_is_400_and_creates_nothing(owner, conversation):
    _round(owner, "turn_1", thinking="fine")
    exported = owner.get(f"{BASE}/timeline/").json()
    thinking = next(item for item in exported["blocks"] if item["type"] == "react.thinking")
    thinking["meta"] = {"provider": "anthropic", "kind": "thinking"}
    answer = owner.post(f"{C}/import/", {**exported, "id": "copy"})
    assert answer.status_code == 400, answer.content
    assert any(key.endswith(".meta.signature") for key in answer.json()["error"]["details"])
    assert owner.get(f"{C}/copy/").status_code == 404
    exported["blocks"] = [item for item in exported["blocks"] if item is not thinking]
    ok = owner.post(f"{C}/import/", {**exported, "id": "copy"})
    assert ok.status_code == 201, ok.content


def test_the_thinking_block_comes_back_first_with_its_signature_only_in_anthropic_messages_and_as_text_elsewhere(
    owner, conversation
):
    _round(owner, "turn_1", thinking="The user asks for order turn_1; look it up first.")
    native = owner.post(f"{BASE}/render/", {"format": "anthropic_messages"}).json()
    assistant = native["request"]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "The user asks for order turn_1; look it up first.",
        "signature": f"{SIGNATURE}turn_1",
    }
    assert [part["type"] for part in assistant["content"]] == ["thinking", "text", "tool_use"]
    for fmt in ("openai_responses", "openai_chat", "gemini_contents", "anthropic", "openai", "text"):
        other = owner.post(f"{BASE}/render/", {"format": fmt}).json()
        assert f"{SIGNATURE}turn_1" not in json.dumps(other), fmt
        # The other native formats keep the readable text (a provider switch), the seed ones nothing.
        assert ("look it up first" in json.dumps(other)) == (
            fmt in ("openai_responses", "openai_chat", "gemini_contents")
        ), fmt
        assert other["tokens"]["visible"] <= native["tokens"]["visible"], fmt


def test_a_compaction_removes_thinking_with_its_turn_and_never_summarizes_it(owner, conversation):
    for n in range(1, 7):
        _round(owner, f"turn_{n}", thinking=f"SECRET-THOUGHT-{n} about the order", result_words=150)
    body = owner.post(
        f"{BASE}/render/", {"format": "anthropic_messages", "max_tokens": 2_500, "system": "You help."}
    ).json()
    compaction = body["compaction"]
    assert compaction and "turn_1" in compaction["covered_turn_ids"], body["tokens"]
    text = json.dumps(body["request"])
    assert "SECRET-THOUGHT-1" not in text, "removed with its turn"
    assert "SECRET-THOUGHT-6" in text, "the retained turns keep theirs"
    summary = owner.get(f"{BASE}/blocks/", path=compaction["summary_path"], include_hidden="1").json()
    summary_text = json.dumps(summary)
    assert "turn_1" in summary_text and "SECRET-THOUGHT" not in summary_text, summary_text[:3000]
