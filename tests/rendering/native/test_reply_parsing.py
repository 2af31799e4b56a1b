"""``parse_reply`` (pure): which blocks each provider's reply becomes, and the 400s it names."""

from __future__ import annotations

import pytest

from timeline_app.rendering.native.replies import ReplyError, digest, parse_reply
from timeline_app.rendering.native.tool_names import provider_tool_name

LONG = "tools." + "a_very_long_tool_name." * 4


def gemini(style: str) -> dict:
    sig, call, meta = ("thoughtSignature", "functionCall", "usageMetadata")
    if style == "snake":
        sig, call, meta = ("thought_signature", "function_call", "usage_metadata")
    key_id = "responseId" if style == "camel" else "response_id"
    return {
        key_id: "r1",
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "I should look it up.", "thought": True, sig: "c2ln"},
                        {call: {"name": provider_tool_name(LONG), "args": {"q": 1}}, sig: "c2lnMg=="},
                        {call: {"id": "fc_7", "name": "search", "args": {}}},
                    ],
                }
            }
        ],
        meta: {"promptTokenCount": 3},
    }


@pytest.mark.parametrize("style", ["camel", "snake"])
def test_a_gemini_reply_in_either_spelling_gives_the_same_blocks(style):
    reply = parse_reply(gemini(style), declared=[LONG])
    assert [(b.type, b.meta.get("kind")) for b in reply.blocks] == [
        ("react.thinking", "thought"),
        ("react.thinking", "signature"),
        ("react.tool.call", None),
        ("react.tool.call", None),
    ]
    # i31a's representation: provider google, the signature's block right before its call's.
    assert [b.meta["provider"] for b in reply.blocks[:2]] == ["google", "google"]
    assert reply.blocks[0].meta["signature"] == "c2ln" and reply.blocks[1].meta["signature"] == "c2lnMg=="
    assert set(reply.blocks[1].meta) == {"provider", "kind", "signature", "reply"}
    assert [(c.tool_call_id, c.name) for c in reply.calls] == [("r1-call-1", LONG), ("fc_7", "search")]
    assert [b.client_id for b in reply.blocks] == [f"reply:r1:{k}" for k in range(4)]
    # Gemini's usage as POST …/usage/ keeps it, whichever spelling came.
    assert reply.usage == {"prompt_token_count": 3}


def gemini_parts(*parts: dict) -> dict:
    return {"responseId": "r2", "candidates": [{"content": {"role": "model", "parts": list(parts)}}]}


def test_a_url_safe_signature_the_sdk_dumps_is_stored_as_standard_base64():
    # google-genai's model_dump(mode="json") writes bytes URL-safe: b"\xfa\xfb\xfc\xfd\xfe\xff".
    reply = parse_reply(gemini_parts({"functionCall": {"name": "search"}, "thought_signature": "-vv8_f7_"}))
    assert reply.blocks[0].meta["signature"] == "+vv8/f7/"


@pytest.mark.parametrize("signature", ["not base64!", "", 7])
def test_a_signature_that_is_no_base64_is_refused_naming_its_part(signature):
    with pytest.raises(ReplyError) as refused:
        parse_reply(gemini_parts({"text": "a"}, {"text": "b", "thoughtSignature": signature}))
    assert refused.value.field == "response.candidates[0].content.parts[1].thoughtSignature"


def test_a_signature_is_stored_only_before_a_part_that_renders():
    """A signature on an empty closing text (nothing renders to carry it) is not stored: kept, it
    would land on the next part rendered instead. An empty thought without a signature says nothing."""
    reply = parse_reply(
        gemini_parts(
            {"text": "", "thought": True},
            {"functionCall": {"name": "search"}},
            {"text": " ", "thoughtSignature": "c2ln"},
        )
    )
    assert [b.type for b in reply.blocks] == ["react.tool.call"]
    answered = parse_reply(gemini_parts({"text": "Done.", "thoughtSignature": "c2ln"}))
    assert [(b.type, b.meta.get("kind")) for b in answered.blocks] == [
        ("react.thinking", "signature"),
        ("assistant.completion", None),
    ]


def test_a_shortened_name_maps_back_only_against_the_declared_names():
    response = {
        "id": "msg_1",
        "type": "message",
        "content": [{"type": "tool_use", "id": "t1", "name": provider_tool_name(LONG), "input": {}}],
    }
    assert parse_reply(response, declared=[LONG]).calls[0].name == LONG
    # Undeclared, it cannot be reversed: kept as the model sent it.
    assert parse_reply(response).calls[0].name == provider_tool_name(LONG)


def test_refusals_are_the_completion_marked_as_such():
    response = {
        "id": "resp_1",
        "object": "response",
        "output": [
            {"type": "message", "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
        ],
    }
    (block,) = parse_reply(response).blocks
    assert (block.type, block.text, block.meta["refusal"]) == (
        "assistant.completion",
        "I can't help with that.",
        True,
    )


def test_a_chat_custom_tool_call_is_not_the_agents_to_run():
    response = {
        "id": "c1",
        "object": "chat.completion",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "x", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
                    ],
                }
            }
        ],
    }
    reply = parse_reply(response)
    assert reply.calls == [] and [b.type for b in reply.blocks] == ["assistant.completion"]


@pytest.mark.parametrize(
    ("response", "field"),
    [
        ({"type": "message", "content": []}, "response.id"),
        ({"id": "x" * 101, "type": "message", "content": []}, "response.id"),
        ({"id": "m", "type": "message", "content": "text"}, "response.content"),
        (
            {"id": "m", "type": "message", "content": [{"type": "tool_use", "id": "t", "input": {}}]},
            "response.content[0].name",
        ),
        ({"id": "c", "object": "chat.completion", "choices": []}, "response.choices"),
        (
            {
                "id": "r",
                "object": "response",
                "output": [{"type": "function_call", "name": "f", "arguments": "[1"}],
            },
            "response.output[0].call_id",
        ),
    ],
)
def test_a_malformed_reply_names_the_field(response, field):
    with pytest.raises(ReplyError) as refused:
        parse_reply(response)
    assert refused.value.field == field


def test_the_digest_ignores_null_members_and_key_order():
    assert digest({"a": 1, "b": None, "c": [{"d": None, "e": 2}]}) == digest({"c": [{"e": 2}], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
