"""The native agent loop, one per provider, on the real SDK with a mocked HTTP transport: the
user code is render → SDK call → ``record_reply`` → run the tools → ``record_tool_results``,
nothing else. Every request the scripted model gets is checked against the SDK's request types and
the provider's rules (``native/validate.py``), and the next render equals, byte for byte, the one
of a conversation whose replies were stored by the hand-written mapping the docs showed before
(``docs/examples/anthropic_tool_loop.py``: thinking blocks, notes, calls, results by
``contribute``)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from timeline_client import (
    TimelineAPIError,
    TimelineClient,
    gemini_tool_name,
    provider_tool_name,
    timeline_tool_name,
)
from timeline_client.thinking import thinking_block

from timeline_app.models import Block, RenderUsage
from timeline_app.rendering.native.validate import violations
from timeline_bench.sdk_types import sdk_type_errors

pytestmark = pytest.mark.django_db
SYSTEM = "You are an order-support agent."
DECLARED = ["orders.lookup", "orders.history"]
SCHEMA = {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}
QUESTION = "Where are orders 1001 and 1002?"


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    return f"{name}: order {arguments['order']} is in transit"


class Scripted:
    """A provider behind a mock transport: checks each request (SDK types, rules), answers the
    first call of a turn with thinking, text and two parallel tool calls, the next with the
    answer. ``answers`` keeps the JSON of every reply."""

    def __init__(self, format: str, reply: Callable[[int, bool], dict[str, Any]]):
        self.format = format
        self.reply = reply
        self.calls = 0
        self.answers: list[dict[str, Any]] = []

    def check(self, body: dict[str, Any]) -> bool:
        """The request's problems (fail the test), and whether its last message answers calls."""
        keys = {"anthropic_messages": ("system", "messages"), "openai_responses": ("input",)}
        checked = {k: body[k] for k in keys.get(self.format, ("messages",)) if k in body}
        problems = violations(self.format, checked) + sdk_type_errors(self.format, checked)
        assert not problems, problems
        if self.format == "anthropic_messages":
            return any(part["type"] == "tool_result" for part in body["messages"][-1]["content"])
        if self.format == "openai_responses":
            return body["input"][-1].get("type") == "function_call_output"
        return body["messages"][-1]["role"] == "tool"

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        answered = self.check(json.loads(request.content))
        self.calls += 1
        answer = self.reply(self.calls, answered)
        self.answers.append(answer)
        return httpx2.Response(200, json=answer)


def anthropic_reply(n: int, answered: bool) -> dict[str, Any]:
    thinking = {"type": "thinking", "thinking": f"Step {n}.", "signature": f"sig-{n}"}
    content: list[dict[str, Any]] = [thinking, {"type": "text", "text": "Both ship tomorrow."}]
    if not answered:
        content = [thinking, {"type": "text", "text": "Looking them up."}] + [
            {
                "type": "tool_use",
                "id": f"toolu_{n}_{k}",
                "name": provider_tool_name(DECLARED[k]),
                "input": {"order": f"100{k + 1}"},
            }
            for k in range(2)
        ]
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "end_turn" if answered else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 900 + n, "output_tokens": 30},
    }


def responses_reply(n: int, answered: bool) -> dict[str, Any]:
    reasoning = {
        "type": "reasoning",
        "id": f"rs_{n}",
        "summary": [{"type": "summary_text", "text": f"Step {n}."}],
        "encrypted_content": f"enc-{n}",
    }
    text = "Both ship tomorrow." if answered else "Looking them up."
    message = {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    output: list[dict[str, Any]] = [reasoning, message]
    if not answered:
        output += [
            {
                "type": "function_call",
                "id": f"fc_{n}_{k}",
                "call_id": f"call_{n}_{k}",
                "name": provider_tool_name(DECLARED[k]),
                "arguments": json.dumps({"order": f"100{k + 1}"}),
                "status": "completed",
            }
            for k in range(2)
        ]
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "gpt-5",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 900 + n,
            "output_tokens": 30,
            "total_tokens": 930 + n,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 10},
        },
    }


def chat_reply(n: int, answered: bool) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "Both ship tomorrow." if answered else "Looking them up.",
    }
    if not answered:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{k}",
                "type": "function",
                "function": {
                    "name": provider_tool_name(DECLARED[k]),
                    "arguments": json.dumps({"order": f"100{k + 1}"}),
                },
            }
            for k in range(2)
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop" if answered else "tool_calls"}],
        "usage": {"prompt_tokens": 900 + n, "completion_tokens": 30, "total_tokens": 930 + n},
    }


ANTHROPIC_TOOLS = [
    {"name": provider_tool_name(n), "description": n, "input_schema": SCHEMA} for n in DECLARED
]
RESPONSES_TOOLS = [
    {"type": "function", "name": provider_tool_name(n), "parameters": SCHEMA} for n in DECLARED
]
CHAT_TOOLS = [
    {"type": "function", "function": {"name": provider_tool_name(n), "parameters": SCHEMA}} for n in DECLARED
]


def call_model(format: str, model: Scripted, kwargs: Any) -> Any:
    """The provider's SDK call, as an agent writes it (the SDK's HTTP transport is the mock)."""
    http = httpx2.Client(transport=httpx2.MockTransport(model))
    if format == "anthropic_messages":
        sdk = anthropic.Anthropic(api_key="test", http_client=http)
        return sdk.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, tools=ANTHROPIC_TOOLS, **kwargs
        )
    client = openai.OpenAI(api_key="test", http_client=http)
    if format == "openai_responses":
        return client.responses.create(model="gpt-5", tools=RESPONSES_TOOLS, **kwargs)
    return client.chat.completions.create(model="gpt-4.1", tools=CHAT_TOOLS, **kwargs)


def native_loop(api: TimelineClient, conv: str, format: str, model: Scripted) -> None:
    """The whole user code of the native loop."""
    while True:
        kwargs = api.render(conv, format=format, system=SYSTEM)
        response = call_model(format, model, kwargs)
        reply = api.record_reply(conv, response, render=kwargs)
        if not reply["tool_calls"]:
            return
        api.record_tool_results(
            conv, {c["tool_call_id"]: run_tool(c["name"], c["input"]) for c in reply["tool_calls"]}
        )


def hand_written(api: TimelineClient, conv: str, format: str, answer: dict[str, Any]) -> None:
    """What an agent stored by hand before ``record_reply``: the reply translated into blocks."""
    if format == "anthropic_messages":
        parts = answer["content"]
        texts = [p["text"] for p in parts if p["type"] == "text"]
        calls = [(p["id"], p["name"], p["input"]) for p in parts if p["type"] == "tool_use"]
        thoughts = [thinking_block(p) for p in parts]
    elif format == "openai_responses":
        items = answer["output"]
        texts = [c["text"] for i in items if i["type"] == "message" for c in i["content"]]
        calls = [
            (i["call_id"], i["name"], json.loads(i["arguments"]))
            for i in items
            if i["type"] == "function_call"
        ]
        thoughts = [thinking_block(i) for i in items]
    else:
        message = answer["choices"][0]["message"]
        texts = [message["content"]]
        calls = [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls", [])
        ]
        thoughts = []
    blocks: list[dict[str, Any]] = [t for t in thoughts if t is not None]
    if not calls:
        api.contribute(
            conv, [*blocks, {"type": "assistant.completion", "author": "assistant", "text": "".join(texts)}]
        )
        return
    blocks.append({"type": "react.notes", "author": "react", "text": "".join(texts)})
    for call_id, provider_name, arguments in calls:
        name = timeline_tool_name(provider_name, declared=DECLARED)
        meta = {"tool_call_id": call_id, "tool_id": name}
        blocks.append(
            {
                "type": "react.tool.call",
                "author": "react",
                "mime": "application/json",
                "text": json.dumps({"tool_id": name, "params": arguments}),
                "meta": meta,
            }
        )
    for call_id, provider_name, arguments in calls:
        name = timeline_tool_name(provider_name, declared=DECLARED)
        blocks.append(
            {
                "type": "react.tool.result",
                "author": "tool",
                "mime": "text/plain",
                "text": run_tool(name, arguments),
                "meta": {"tool_call_id": call_id, "tool_id": name},
            }
        )
    api.contribute(conv, blocks)


def same_but_start_times(one: Any, other: Any) -> bool:
    """Equal JSON once the turn headers' start times (the clock at ``start_turn``) are masked."""
    stamp = re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]+Z")
    return stamp.sub("T", json.dumps(one, sort_keys=True)) == stamp.sub(
        "T", json.dumps(other, sort_keys=True)
    )


FORMATS = {
    "anthropic_messages": anthropic_reply,
    "openai_responses": responses_reply,
    "openai_chat": chat_reply,
}


@pytest.mark.parametrize("format", list(FORMATS))
def test_the_native_loop_is_render_call_record_reply_tools_record_results(api, format):
    conv = api.create_conversation(id="loop")["id"]
    model = Scripted(format, FORMATS[format])
    for turn in ("t1", "t2"):
        api.start_turn(conv, QUESTION, turn_id=turn)
        native_loop(api, conv, format, model)
    assert model.calls == 4  # each turn: the fan-out, then the answer

    # The next render is valid and is what the hand-written mapping stores for the same replies.
    by_hand = api.create_conversation(id="by-hand")["id"]
    for turn, answers in (("t1", model.answers[:2]), ("t2", model.answers[2:])):
        api.start_turn(by_hand, QUESTION, turn_id=turn)
        for answer in answers:
            hand_written(api, by_hand, format, answer)
    mine = api.render(conv, format=format, system=SYSTEM)
    theirs = api.render(by_hand, format=format, system=SYSTEM)
    model.check(dict(mine))
    mine.pop("prompt_cache_key", None), theirs.pop("prompt_cache_key", None)  # a hash of the conversation id
    assert same_but_start_times(mine, theirs)
    # Every reply's usage is its render's report.
    assert RenderUsage.objects.filter(conversation__public_id=conv).count() == 4
    calls = Block.objects.filter(conversation__public_id=conv, type="react.tool.call")
    assert sorted({c.meta["tool_id"] for c in calls}) == sorted(DECLARED)


def test_retry_with_compaction_hands_record_reply_the_render_it_was_made_from(api):
    conv = api.create_conversation(id="retry")["id"]
    model = Scripted("anthropic_messages", anthropic_reply)
    api.start_turn(conv, QUESTION, turn_id="t1")
    call = api.retry_with_compaction(
        conv,
        lambda kwargs: call_model("anthropic_messages", model, kwargs),
        format="anthropic_messages",
        system=SYSTEM,
    )
    reply, render = call  # it unpacks, and stands in for the reply as before
    assert call.content == reply.content and call.stop_reason == "tool_use"
    recorded = api.record_reply(conv, call)
    assert recorded["usage"]["render_id"] == render.render["render_id"]
    assert [c["name"] for c in recorded["tool_calls"]] == DECLARED


def test_retry_with_compaction_reports_the_usage_when_asked(api):
    conv = api.create_conversation(id="retry")["id"]
    model = Scripted("openai_chat", chat_reply)
    api.start_turn(conv, QUESTION)
    call = api.retry_with_compaction(
        conv, lambda kwargs: call_model("openai_chat", model, kwargs), format="openai_chat", report_usage=True
    )
    assert call.usage_report["tokens"]["output"] == 30
    # Recording the reply afterwards replays that report: nothing twice, no conflict.
    assert api.record_reply(conv, call)["usage"] == call.usage_report
    assert RenderUsage.objects.count() == 1


def test_a_result_for_a_call_the_conversation_does_not_know_is_refused_by_name(api):
    conv = api.create_conversation(id="refused")["id"]
    api.start_turn(conv, QUESTION)
    with pytest.raises(TimelineAPIError) as refused:
        api.record_tool_results(conv, {"call_nowhere": "x"}, errors=["call_nowhere"])
    assert refused.value.status == 400 and "results[0].tool_call_id" in refused.value.details


# ---------------------------------------------------------------- Gemini

# Signatures whose standard base64 has "+" and "/": the SDK's JSON (its dump, its wire) writes
# them URL-safe, the service keeps them standard; the bytes must survive the round.
ANSWER_SIGNATURE = base64.b64encode(b"\xfa\xfb\xfcanswer").decode()
CALL_SIGNATURE = base64.b64encode(b"\xfe\xffcall").decode()
GEMINI_TOOLS = [
    genai.types.Tool(
        function_declarations=[
            genai.types.FunctionDeclaration(
                name=gemini_tool_name(provider_tool_name(n)), parameters_json_schema=SCHEMA
            )
            for n in DECLARED
        ]
    )
]


def gemini_reply(n: int, answered: bool) -> dict[str, Any]:
    if answered:
        parts: list[dict[str, Any]] = [{"text": "Both ship tomorrow.", "thoughtSignature": ANSWER_SIGNATURE}]
    else:
        parts = [
            {"text": f"Step {n}.", "thought": True},
            {
                "functionCall": {
                    "name": gemini_tool_name(provider_tool_name(DECLARED[0])),
                    "args": {"order": "1001"},
                },
                "thoughtSignature": CALL_SIGNATURE,
            },
            {
                "functionCall": {
                    "name": gemini_tool_name(provider_tool_name(DECLARED[1])),
                    "args": {"order": "1002"},
                }
            },
        ]
    return {
        "responseId": f"gem_{n}",
        "modelVersion": "gemini-2.5-flash",
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": 900 + n,
            "cachedContentTokenCount": 0,
            "candidatesTokenCount": 30,
            "thoughtsTokenCount": 10,
            "totalTokenCount": 940 + n,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 900 + n}],
        },
    }


def gemini_client(handler: Callable[[httpx2.Request], httpx2.Response]) -> genai.Client:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return genai.Client(api_key="test", http_options=genai.types.HttpOptions(httpx_client=http))


def _plain_bytes(value: Any) -> Any:
    """SDK data as JSON, bytes as standard base64 (what the render writes)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _plain_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_bytes(v) for v in value]
    return value


def gemini_model_content(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """An answer's parts as a request sends them back: snake_case, signatures standard base64,
    function calls without their id (the service gives one to a call that came without)."""
    content = genai.types.Content.model_validate(answer["candidates"][0]["content"])
    parts = _plain_bytes(content.model_dump(mode="python", exclude_none=True))["parts"]
    for part in parts:
        part.get("function_call", {}).pop("id", None)
    return parts


class ScriptedGemini:
    """``models.generate_content`` behind a mock transport: each request read through the SDK's
    types and checked (``violations``, ``sdk_type_errors``); every earlier answer must come back
    as the same model content, each thought signature on the part that carried it."""

    def __init__(self) -> None:
        self.calls = 0
        self.answers: list[dict[str, Any]] = []
        self.sent_back = 0  # earlier answers found unchanged in a request

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        contents = [
            _plain_bytes(genai.types.Content.model_validate(c).model_dump(mode="python", exclude_none=True))
            for c in body["contents"]
        ]
        problems = violations("gemini_contents", {"contents": contents}) + sdk_type_errors(
            "gemini_contents", {"contents": contents}
        )
        assert not problems, problems
        models = [c["parts"] for c in contents if c["role"] == "model"]
        for answer in self.answers:
            expected = gemini_model_content(answer)
            for parts in models:
                without_ids = [
                    {**p, "function_call": {k: v for k, v in p["function_call"].items() if k != "id"}}
                    if "function_call" in p
                    else p
                    for p in parts
                ]
                if without_ids == expected:
                    assert all(p["function_call"].get("id") for p in parts if "function_call" in p)
                    self.sent_back += 1
                    break
            else:
                raise AssertionError(f"answer {answer['responseId']} not sent back as it came: {models}")
        answered = any("function_response" in part for part in contents[-1]["parts"])
        self.calls += 1
        answer = gemini_reply(self.calls, answered)
        self.answers.append(answer)
        return httpx2.Response(200, json=answer)


def test_a_gemini_reply_is_stored_with_its_thought_signatures_and_calls(api):
    """Reply parsing on the real google-genai SDK: i31a's thinking representation (provider
    ``google``), signatures as standard base64 although the SDK dumps them URL-safe."""
    conv = api.create_conversation(id="gemini")["id"]
    api.start_turn(conv, QUESTION, turn_id="t1")
    answers = iter([gemini_reply(1, False), gemini_reply(2, True)])
    client = gemini_client(lambda request: httpx2.Response(200, json=next(answers)))

    response = client.models.generate_content(model="gemini-2.5-flash", contents=QUESTION)
    reply = api.record_reply(conv, response)
    outputs = {c["tool_call_id"]: run_tool(c["name"], c["input"]) for c in reply["tool_calls"]}
    api.record_tool_results(conv, outputs)
    final = api.record_reply(conv, client.models.generate_content(model="gemini-2.5-flash", contents="…"))

    assert [(b["type"], b["meta"].get("provider"), b["meta"].get("kind")) for b in reply["blocks"]] == [
        ("react.thinking", "google", "thought"),
        ("react.thinking", "google", "signature"),
        ("react.tool.call", None, None),
        ("react.tool.call", None, None),
    ]
    assert reply["blocks"][1]["meta"]["signature"] == CALL_SIGNATURE
    assert [c["name"] for c in reply["tool_calls"]] == DECLARED
    assert [c["tool_call_id"] for c in reply["tool_calls"]] == ["gem_1-call-1", "gem_1-call-2"]
    assert [b["type"] for b in final["blocks"]] == ["react.thinking", "assistant.completion"]
    assert final["blocks"][0]["meta"]["signature"] == ANSWER_SIGNATURE
    results = Block.objects.filter(conversation__public_id=conv, type="react.tool.result").order_by("seq")
    assert [r.meta["tool_call_id"] for r in results] == list(outputs)


def test_the_gemini_native_loop(api):
    """render → generate_content → record_reply (usage reported) → tools → record_tool_results, two
    turns: every request valid, every answer back as the same model content (signatures on their
    parts), each call's usage its render's report, priced as Gemini; the client's thinking_block
    mapping (the Gemini example's, before record_reply) stores the same render."""
    conv = api.create_conversation(id="gemini-loop")["id"]
    model = ScriptedGemini()
    client = gemini_client(model)
    for turn in ("t1", "t2"):
        api.start_turn(conv, QUESTION, turn_id=turn)
        while True:
            kwargs = api.render(conv, format="gemini_contents", system=SYSTEM, model="gemini-2.5-flash")
            response = client.models.generate_content(
                model="gemini-2.5-flash",
                contents=kwargs["contents"],
                config={**kwargs["config"], "tools": GEMINI_TOOLS},
            )
            reply = api.record_reply(conv, response, render=kwargs)
            # The client's usage report of the same call reads it as record_reply did: a replay.
            assert api.report_usage(kwargs, response) == reply["usage"]
            if not reply["tool_calls"]:
                break
            api.record_tool_results(
                conv, {c["tool_call_id"]: run_tool(c["name"], c["input"]) for c in reply["tool_calls"]}
            )
    assert model.calls == 4 and model.sent_back == 0 + 1 + 2 + 3
    usages = RenderUsage.objects.filter(conversation__public_id=conv).order_by("id")
    assert [(u.provider, u.priced_model, u.uncached_input_tokens, u.output_tokens) for u in usages] == [
        ("google", "gemini-2.5-flash", 900 + n, 40) for n in range(1, 5)
    ]
    assert all(
        u.reported["usage"]
        == {
            "prompt_token_count": 900 + n,
            "cached_content_token_count": 0,
            "candidates_token_count": 30,
            "thoughts_token_count": 10,
        }  # the counts the cost model reads (kept_usage): total_token_count is not stored
        for n, u in enumerate(usages, start=1)
    )

    # The hand mapping with timeline_client.thinking.thinking_block stores what record_reply stores.
    by_hand = api.create_conversation(id="gemini-by-hand")["id"]
    for turn, answers in (("t1", model.answers[:2]), ("t2", model.answers[2:])):
        api.start_turn(by_hand, QUESTION, turn_id=turn)
        for answer in answers:
            gemini_by_hand(api, by_hand, answer)
    mine = api.render(conv, format="gemini_contents", system=SYSTEM)
    theirs = api.render(by_hand, format="gemini_contents", system=SYSTEM)
    assert same_but_start_times(mine, theirs)


def gemini_by_hand(api: TimelineClient, conv: str, answer: dict[str, Any]) -> None:
    response = genai.types.GenerateContentResponse.model_validate(answer)
    parts = response.candidates[0].content.parts  # type: ignore[index,union-attr]
    blocks: list[dict[str, Any]] = []
    calls = [p.function_call for p in parts if p.function_call is not None]
    for part in parts:
        thinking = thinking_block(part)
        if thinking is not None:
            blocks.append(thinking)
        if part.function_call is not None:
            n = len([b for b in blocks if b["type"] == "react.tool.call"]) + 1
            name = timeline_tool_name(part.function_call.name or "", declared=DECLARED)
            meta = {"tool_call_id": f"{answer['responseId']}-call-{n}", "tool_id": name}
            text = json.dumps({"tool_id": name, "params": part.function_call.args})
            blocks.append(
                {
                    "type": "react.tool.call",
                    "author": "react",
                    "mime": "application/json",
                    "text": text,
                    "meta": meta,
                }
            )
        elif part.text and not part.thought:
            blocks.append({"type": "assistant.completion", "author": "assistant", "text": part.text})
    for call in [b for b in blocks if b["type"] == "react.tool.call"]:
        arguments = json.loads(call["text"])["params"]
        blocks.append(
            {
                "type": "react.tool.result",
                "author": "tool",
                "mime": "text/plain",
                "text": run_tool(call["meta"]["tool_id"], arguments),
                "meta": dict(call["meta"]),
            }
        )
    assert len(calls) == len([b for b in blocks if b["type"] == "react.tool.result"])
    api.contribute(conv, blocks)


def test_a_named_context_runs_the_loop_too(api):
    from timeline_client import get_context

    conv = api.create_conversation(id="named")["id"]
    context = get_context(api, conv, "attempt_a")
    model = Scripted("openai_chat", chat_reply)
    api.start_turn(conv, QUESTION, context="attempt_a")
    while True:
        kwargs = context.render(format="openai_chat", system=SYSTEM)
        reply = context.record_reply(call_model("openai_chat", model, kwargs), render=kwargs)
        if not reply["tool_calls"]:
            break
        context.record_tool_results(
            {c["tool_call_id"]: run_tool(c["name"], c["input"]) for c in reply["tool_calls"]}
        )
    stored = Block.objects.filter(conversation__public_id=conv)
    assert {row.timeline.name for row in stored.select_related("timeline")} == {"attempt_a"}
    assert stored.filter(type="react.tool.result").count() == 2
    assert RenderUsage.objects.filter(conversation__public_id=conv).count() == 2


def test_record_tool_results_takes_error_outputs_and_images_by_call_id():
    from timeline_client.timelines import tool_results_body

    body = tool_results_body(
        {"call_1": {"ok": True}},
        errors={"call_2": "timed out"},
        images={"call_1": [("image/png", b"\x89PNG")]},
    )
    assert body == {
        "results": [
            {
                "tool_call_id": "call_1",
                "output": {"ok": True},
                "images": [{"mime": "image/png", "base64": "iVBORw=="}],
            },
            {"tool_call_id": "call_2", "output": "timed out", "is_error": True},
        ]
    }
    assert tool_results_body({"call_1": "x"}, errors=["call_1"])["results"] == [
        {"tool_call_id": "call_1", "output": "x", "is_error": True}
    ]
