"""``gemini_contents``: Gemini's ``contents`` + ``config`` for ``models.generate_content``, valid
in every state (alternation, first and last content the user's, every ``function_call`` answered
by its ``function_response`` in the very next user content with the same name and id), thought
signatures on the parts that carried them, and no cache marker (implicit caching)."""

from __future__ import annotations

import json
from typing import Any

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.messages import NewMessage, message_block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native.conversation import MISSING_RESULT
from timeline_app.rendering.native.validate import gemini_violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.sdk_types import sdk_type_errors

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
SIGNATURE = "Q2lJQkRHZW1pbmlDYWxs"


def _block(seq: int, type: str, text: str = "", **fields: Any) -> Block:
    block = Block(seq=seq, type=type, turn_id=fields.pop("turn_id", "turn_1"), text=text, **fields)
    return Block(**{**block.__dict__, "tokens": block_tokens(block)})


def _call(seq: int, call_id: str, name: str = "orders.lookup", **fields: Any) -> Block:
    text = json.dumps({"tool_id": name, "params": {"order": seq}})
    return _block(
        seq,
        b.TOOL_CALL,
        text,
        author="react",
        mime="application/json",
        meta={"tool_call_id": call_id},
        **fields,
    )


def _result(seq: int, call_id: str, text: str = "in transit", **fields: Any) -> Block:
    meta = {"tool_call_id": call_id, **fields.pop("meta", {})}
    return _block(seq, b.TOOL_RESULT, text, author="tool", meta=meta, **fields)


def _head(turn: str = "turn_1", seq: int = 1) -> list[Block]:
    return [
        _block(
            seq,
            b.TURN_HEADER,
            author="system",
            ts="2026-01-01T00:00:00Z",
            path=b.turn_header_path(turn),
            turn_id=turn,
        ),
        _block(
            seq + 1,
            b.USER_PROMPT,
            "Where are my orders?",
            author="user",
            path=b.user_prompt_path(turn),
            turn_id=turn,
        ),
    ]


def _render(blocks: list[Block], **options: Any) -> Any:
    rendered = render_window(
        blocks,
        settings=RenderSettings(cache_min_tokens=0, **options.pop("settings", {})),
        options=RenderOptions(format="gemini_contents", **options),
    )
    assert rendered.request is not None
    prefill = options.get("prefill", False)
    assert gemini_violations(rendered.request, prefill=prefill) == []
    assert sdk_type_errors("gemini_contents", rendered.request) == []
    assert rendered.cache_points == []
    return rendered


def test_parallel_calls_out_of_order_are_answered_in_the_next_user_content_by_name_and_id():
    blocks = [
        *_head(),
        _block(3, b.NOTES, "Looking both up.", author="react"),
        _call(4, "call_a"),
        _call(5, "call_b", name="billing.refund"),
        _result(6, "call_b", "refunded", meta={"status": "error"}),
        _result(7, "call_a", "in transit"),
        _block(8, b.ASSISTANT_COMPLETION, "Order A is in transit.", author="assistant"),
    ]
    request = _render(blocks, system_text="You are a shop assistant.").request
    contents = request["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[1]["parts"] == [
        {"text": "Looking both up."},
        {"function_call": {"id": "call_a", "name": "orders-2elookup", "args": {"order": 4}}},
        {"function_call": {"id": "call_b", "name": "billing-2erefund", "args": {"order": 5}}},
    ]
    responses = [part["function_response"] for part in contents[2]["parts"]]
    assert [(r["id"], r["name"]) for r in responses] == [
        ("call_a", "orders-2elookup"),
        ("call_b", "billing-2erefund"),
    ]
    assert responses[0]["response"]["output"].endswith("in transit")
    assert list(responses[1]["response"]) == ["error"] and responses[1]["response"]["error"].endswith(
        "refunded"
    )
    assert contents[3]["parts"] == [{"text": "Order A is in transit."}]
    assert contents[4] == {"role": "user", "parts": [{"text": "Continue."}]}
    assert request["config"] == {"system_instruction": {"parts": [{"text": "You are a shop assistant."}]}}


def test_a_missing_result_gets_a_synthetic_error_response_and_an_orphan_result_is_user_text():
    blocks = [*_head(), _call(3, "call_lost"), _result(4, "call_nobody", "stray output")]
    contents = _render(blocks).request["contents"]
    response = contents[2]["parts"][0]["function_response"]
    assert response["id"] == "call_lost"
    assert response["response"] == {"error": MISSING_RESULT.format(call_id="call_lost")}
    assert len(contents[2]["parts"]) == 2 and contents[2]["parts"][1]["text"].endswith("stray output")
    assert "function_response" not in json.dumps(contents[2]["parts"][1:])


def test_a_result_image_goes_inline_after_the_function_responses():
    blocks = [*_head(), _call(3, "call_shot"), _result(4, "call_shot", "", mime="image/png", data=PNG)]
    parts = _render(blocks).request["contents"][2]["parts"]
    assert "function_response" in parts[0]
    assert parts[1] == {"inline_data": {"mime_type": "image/png", "data": PNG}}


def test_tool_names_start_with_a_letter_or_underscore():
    blocks = [*_head(), _call(3, "c1", name="1password.read"), _result(4, "c1")]
    contents = _render(blocks).request["contents"]
    assert contents[1]["parts"][0]["function_call"]["name"] == "_-g1password-2eread"
    assert contents[2]["parts"][0]["function_response"]["name"] == "_-g1password-2eread"


def test_a_thought_signature_goes_back_on_the_part_that_carried_it():
    thought = {"provider": "google", "kind": "thought", "signature": "VGhvdWdodFNpZw=="}
    signature = {"provider": "google", "kind": "signature", "signature": SIGNATURE}
    blocks = [
        *_head(),
        _block(3, b.THINKING, "Two lookups needed.", author="assistant", meta=thought),
        _block(4, b.THINKING, author="assistant", meta=signature),
        _call(5, "call_a"),
        _call(6, "call_b"),  # a parallel call: only the first carries the signature
        _result(7, "call_a"),
        _result(8, "call_b"),
    ]
    model = _render(blocks).request["contents"][1]["parts"]
    assert model[0] == {
        "text": "Two lookups needed.",
        "thought": True,
        "thought_signature": "VGhvdWdodFNpZw==",
    }
    assert model[1]["thought_signature"] == SIGNATURE and "function_call" in model[1]
    assert "thought_signature" not in model[2]


def test_a_hidden_call_keeps_the_signature_on_its_function_call():
    signature = {"provider": "google", "kind": "signature", "signature": SIGNATURE}
    call = _call(4, "call_a").hide(replacement_text="[call hidden]", reason="agent", replacement_tokens=3)
    blocks = [*_head(), _block(3, b.THINKING, author="assistant", meta=signature), call, _result(5, "call_a")]
    model = _render(blocks).request["contents"][1]["parts"]
    assert list(model[0]) == ["text"] and model[0]["text"].endswith("[call hidden]")
    assert model[1]["thought_signature"] == SIGNATURE and model[1]["function_call"]["args"] == {}


def test_a_signature_with_nothing_after_it_is_left_out():
    signature = {"provider": "google", "kind": "signature", "signature": SIGNATURE}
    blocks = [*_head(), _block(3, b.THINKING, author="assistant", meta=signature)]
    request = _render(blocks).request
    assert SIGNATURE not in json.dumps(request)
    assert [c["role"] for c in request["contents"]] == ["user"]


def test_a_named_context_maps_its_system_messages_to_the_system_instruction():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_w", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_w", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
    blocks = []
    for seq, message in enumerate(messages, start=1):
        new = message_block(
            NewMessage(message=message, message_id=f"m{seq}", timestamp="2026-01-01T00:00:00Z")
        )
        blocks.append(
            _block(seq, new.type, new.text, author=new.author, path=new.path, meta=new.meta, mime=new.mime)
        )
    request = _render(blocks).request
    assert request["config"]["system_instruction"] == {"parts": [{"text": "Be brief."}]}
    roles = [c["role"] for c in request["contents"]]
    assert roles == ["user", "model", "user", "model", "user"]
    assert request["contents"][2]["parts"][0]["function_response"]["response"] == {"output": "sunny"}


def test_a_window_that_starts_with_the_model_gets_a_user_text_first():
    blocks = [_block(1, b.ASSISTANT_COMPLETION, "Earlier answer.", author="assistant"), *_head(seq=2)]
    contents = _render(blocks).request["contents"]
    assert contents[0]["role"] == "user" and contents[1]["role"] == "model"


def test_the_validator_catches_a_response_in_the_wrong_content_or_under_another_name():
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"function_call": {"id": "a", "name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"function_response": {"id": "a", "name": "g", "response": {}}}]},
        ]
    }
    assert any("do not answer" in v for v in gemini_violations(request))
    request["contents"][2]["parts"][0]["function_response"]["name"] = "f"
    assert gemini_violations(request) == []
    request["contents"].insert(2, {"role": "user", "parts": [{"text": "between"}]})
    assert gemini_violations(request)  # alternation, and the call no longer answered next
    request["contents"][2:] = [
        {
            "role": "user",
            "parts": [{"text": "x"}, {"function_response": {"id": "a", "name": "f", "response": {}}}],
        }
    ]
    assert any("after other parts" in v for v in gemini_violations(request))
    request["contents"][2:] = [
        {"role": "user", "parts": [{"function_response": {"id": "a", "name": "f", "response": {}}}]},
        {"role": "model", "parts": [{"text": "done"}]},
    ]
    assert any("not the user's" in v for v in gemini_violations(request))
    assert gemini_violations(request, prefill=True) == []
    bad_name = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"function_call": {"id": "b", "name": "1f", "args": {}}}]},
            {"role": "user", "parts": [{"function_response": {"id": "b", "name": "1f", "response": {}}}]},
        ]
    }
    assert any("Gemini accepts" in v for v in gemini_violations(bad_name))
