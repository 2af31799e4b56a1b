"""``format`` ``anthropic_messages``, ``openai_responses``, ``openai_chat``, ``gemini_contents``
over HTTP, for the main context and a named one: the request body is valid for the provider and
ready for the SDK; a render after the model's message ends with the user's (``continue_text``)
unless it asks for ``prefill``."""

import json

import pytest

from timeline_app.rendering.native.validate import violations
from timeline_bench.sdk_types import sdk_type_errors

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
NATIVE = ("anthropic_messages", "openai_responses", "openai_chat", "gemini_contents")
ITEMS = {"openai_responses": "input", "gemini_contents": "contents"}


def _tool_round(owner, *, call_id: str, result: bool) -> None:
    call = {"tool_id": "web_tools.web_search", "tool_call_id": call_id, "params": {"q": "food"}}
    blocks = [
        {
            "type": "react.tool.call",
            "turn_id": "turn_1",
            "mime": "application/json",
            "text": json.dumps(call),
            "meta": {"tool_call_id": call_id},
        }
    ]
    if result:
        blocks.append(
            {
                "type": "react.tool.result",
                "turn_id": "turn_1",
                "mime": "application/json",
                "text": '{"ok": true}',
                "meta": {"tool_call_id": call_id},
            }
        )
    assert owner.post(f"{BASE}/blocks/", {"blocks": blocks}).status_code == 201


@pytest.mark.parametrize("fmt", NATIVE)
def test_a_native_render_of_the_main_context_is_a_valid_sdk_request(owner, conversation, fmt):
    owner.post(f"{BASE}/turns/", {"turn_id": "turn_1", "prompt": "Find food in Wuppertal"})
    _tool_round(owner, call_id="tc_a", result=True)
    _tool_round(owner, call_id="tc_b", result=False)
    answer = owner.post(f"{BASE}/render/", {"format": fmt, "system": "You are an agent."})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    request = body["request"]
    assert violations(fmt, request) == []
    assert sdk_type_errors(fmt, request) == []
    assert body["blocks"] == request[ITEMS.get(fmt, "messages")]
    assert body["ending"] == "user"
    text = json.dumps(request)
    assert "web_tools-2eweb_search" in text and "no result stored for tool call tc_b" in text
    if fmt == "anthropic_messages":
        assert request["system"][0]["text"] == "You are an agent."
    elif fmt == "gemini_contents":
        assert request["config"] == {"system_instruction": {"parts": [{"text": "You are an agent."}]}}
    else:
        assert request["prompt_cache_key"].startswith("tl-")
    again = owner.post(f"{BASE}/render/", {"format": fmt, "system": "You are an agent."}).json()
    assert again["request"] == request


def test_the_prompt_cache_key_is_per_context(owner, conversation):
    owner.post(f"{BASE}/contexts/attempt_a/messages/", {"messages": [{"role": "user", "content": "hi"}]})
    owner.post(f"{BASE}/turns/", {"turn_id": "turn_1", "prompt": "hi"})
    main = owner.post(f"{BASE}/render/", {"format": "openai_chat"}).json()["request"]["prompt_cache_key"]
    named = owner.post(f"{BASE}/contexts/attempt_a/render/", {"format": "openai_chat"}).json()
    assert named["request"]["prompt_cache_key"] != main


@pytest.mark.parametrize("fmt", NATIVE)
def test_a_named_context_renders_its_messages_natively(owner, conversation, fmt):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2+2?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "calc.add", "arguments": '{"a": 2, "b": 2}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "calc.add", "arguments": '{"a": 1, "b": 1}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "4"},
    ]
    assert owner.post(f"{BASE}/contexts/attempt_a/messages/", {"messages": messages}).status_code == 201
    answer = owner.post(f"{BASE}/contexts/attempt_a/render/", {"format": fmt})
    assert answer.status_code == 200, answer.content
    request = answer.json()["request"]
    assert violations(fmt, request) == [] and sdk_type_errors(fmt, request) == []
    if fmt == "anthropic_messages":
        assert request["system"] == [{"type": "text", "text": "Be brief."}]
        assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]
        assert [c["tool_use_id"] for c in request["messages"][2]["content"]] == ["call_1", "call_2"]
    if fmt == "gemini_contents":
        assert request["config"]["system_instruction"] == {"parts": [{"text": "Be brief."}]}
        responses = [p["function_response"] for p in request["contents"][2]["parts"]]
        assert [(r["id"], r["name"]) for r in responses] == [
            ("call_1", "calc-2eadd"),
            ("call_2", "calc-2eadd"),
        ]


def _finished_turn(owner, path: str = BASE) -> None:
    owner.post(f"{path}/turns/", {"turn_id": "turn_1", "prompt": "Find food in Wuppertal"})
    completion = {
        "type": "assistant.completion",
        "turn_id": "turn_1",
        "author": "assistant",
        "text": "Try the Luisenviertel.",
    }
    assert owner.post(f"{path}/blocks/", {"blocks": [completion]}).status_code == 201


@pytest.mark.parametrize("fmt", ["anthropic_messages", "gemini_contents"])
def test_a_render_after_the_models_answer_ends_with_the_users_continue_message(owner, conversation, fmt):
    _finished_turn(owner)
    body = owner.post(f"{BASE}/render/", {"format": fmt}).json()
    assert body["ending"] == "continue_text"
    assert "Continue." in json.dumps(body["request"][ITEMS.get(fmt, "messages")][-1])
    assert violations(fmt, body["request"]) == []
    assert (
        owner.client.patch(f"{BASE}/", {"settings": {"continue_text": "Go on."}}, format="json").status_code
        == 200
    )
    body = owner.post(f"{BASE}/render/", {"format": fmt}).json()
    assert "Go on." in json.dumps(body["request"][ITEMS.get(fmt, "messages")][-1])
    prefilled = owner.post(f"{BASE}/render/", {"format": fmt, "prefill": True}).json()
    assert prefilled["ending"] == "prefill"
    assert prefilled["request"][ITEMS.get(fmt, "messages")][-1]["role"] in ("assistant", "model")
    assert body["cache_points"] == prefilled["cache_points"]


def test_a_named_context_whose_last_message_is_the_assistants_ends_with_the_user(owner, conversation):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]
    owner.post(f"{BASE}/contexts/attempt_a/messages/", {"messages": messages})
    for fmt in ("anthropic_messages", "gemini_contents"):
        body = owner.post(f"{BASE}/contexts/attempt_a/render/", {"format": fmt}).json()
        assert body["ending"] == "continue_text" and violations(fmt, body["request"]) == []
    chat = owner.post(f"{BASE}/contexts/attempt_a/render/", {"format": "openai_chat"}).json()
    assert chat["ending"] == "assistant" and chat["request"]["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("bad", [{"continue_text": ""}, {"continue_text": 3}])
def test_a_bad_continue_text_setting_is_a_400(owner, conversation, bad):
    answer = owner.client.patch(f"{BASE}/", {"settings": bad}, format="json")
    assert answer.status_code == 400
    assert "continue_text" in json.dumps(answer.json()["error"]["details"])


def test_prefill_must_be_a_boolean(owner, conversation):
    answer = owner.post(f"{BASE}/render/", {"format": "anthropic_messages", "prefill": "yes"})
    assert answer.status_code == 400 and "prefill" in answer.json()["error"]["details"]


def test_an_unknown_format_is_a_400(owner, conversation):
    answer = owner.post(f"{BASE}/render/", {"format": "anthropic_message"})
    assert answer.status_code == 400
    assert answer.json()["error"]["details"]["format"]


@pytest.mark.parametrize("fmt", ["openai_responses", "openai_chat"])
def test_a_gpt_56_render_carries_breakpoints_and_its_forecast_and_usage_know_writes(owner, conversation, fmt):
    owner.post(f"{BASE}/turns/", {"turn_id": "turn_1", "prompt": "Find food in Wuppertal " * 300})
    _tool_round(owner, call_id="tc_a", result=True)
    system = "You are an agent. " * 400
    body = {"format": fmt, "system": system, "model": "gpt-5.6-sol", "now": "2026-03-01T12:00:00Z"}
    first = owner.post(f"{BASE}/render/", body).json()
    request = first["request"]
    assert request["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}
    assert "prompt_cache_breakpoint" in json.dumps(request) and first["cache_points"]
    assert violations(fmt, request) == [] and sdk_type_errors(fmt, request) == []
    forecast = first["usage_forecast"]
    assert forecast["cache_read_input_tokens"] == 0 and forecast["cache_write_tokens"] > 0
    # The same request again, a minute later: read at the repeated breakpoints.
    second = owner.post(f"{BASE}/render/", {**body, "now": "2026-03-01T12:01:00Z"}).json()
    assert second["usage_forecast"]["cache_read_input_tokens"] == forecast["cache_write_tokens"]
    usage = {
        "input_tokens": 10_000,
        "output_tokens": 10,
        "total_tokens": 10_010,
        "input_tokens_details": {
            "cached_tokens": 0,
            "cache_write_tokens": 8_000,
            "cache_write_tokens_details": {"ttl_30m_tokens": 8_000, "ttl_12h_tokens": 0},
        },
    }
    stored = owner.post(
        f"{BASE}/renders/{first['render_id']}/usage/", {"usage": usage, "model": "gpt-5.6-sol"}
    ).json()
    # 2,000 × $4 + 8,000 × $5 (1.25×) + 10 × $20 per million
    assert stored["cost_usd"] == "0.0482"
    older = owner.post(f"{BASE}/render/", {**body, "model": "gpt-5.5"}).json()["request"]
    assert "prompt_cache_options" not in older and "prompt_cache_breakpoint" not in json.dumps(older)


def test_switching_to_a_model_that_takes_breakpoints_is_a_settings_change_for_the_cache(owner, conversation):
    owner.post(f"{BASE}/turns/", {"turn_id": "turn_1", "prompt": "Find food in Wuppertal"})
    body = {"format": "openai_responses", "system": "You are an agent.", "now": "2026-03-01T12:00:00Z"}
    owner.post(f"{BASE}/render/", {**body, "model": "gpt-5.5"})
    same = owner.post(f"{BASE}/render/", {**body, "model": "gpt-5.5", "now": "2026-03-01T12:00:10Z"}).json()
    assert same["cache"]["reason"] == "appended_only"
    switched = owner.post(f"{BASE}/render/", {**body, "model": "gpt-5.6-sol", "now": "2026-03-01T12:00:20Z"})
    assert switched.json()["cache"]["reason"] == "settings_changed"
