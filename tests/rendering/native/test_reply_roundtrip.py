"""Any reply the SDK types allow (text only, tool calls only, thinking + calls, parallel calls,
refusals, empty text) is read into blocks (``rendering/native/replies.py``) that render back, in
its provider's native format, as the same assistant message. "The same" up to what the providers
themselves require of a request: empty texts left out (the APIs reject them), Anthropic thinking
first, a reasoning item only before an item of its message, a refusal sent back as the assistant's
text, arguments as canonical JSON; Gemini's thought signatures on the parts that carried them."""

from __future__ import annotations

import base64
import json
from typing import Any

import anthropic.types
import google.genai.types
import openai.types.chat
import openai.types.responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.rendering.native import render_native
from timeline_app.rendering.native.replies import parse_reply
from timeline_app.rendering.native.tool_names import gemini_tool_name, provider_tool_id, provider_tool_name

DECLARED = ["orders.lookup", "search", "fs-read", "tools." + "very_long_name." * 6]
TEXTS = st.one_of(st.just(""), st.just("  \n"), st.text(min_size=1, max_size=30))
NAMES = st.sampled_from([provider_tool_name(name) for name in DECLARED])
ARGS = st.dictionaries(
    st.sampled_from(["order", "q", "n"]), st.one_of(st.integers(), st.text(max_size=8)), max_size=3
)
IDS = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True)


def stored(reply_json: dict[str, Any]) -> list[Block]:
    """A turn (header, prompt), the reply's blocks, and a result for each of its calls."""
    reply = parse_reply(reply_json, declared=DECLARED)
    rows = [
        Block(seq=1, type=b.TURN_HEADER, turn_id="t1", author="system"),
        Block(seq=2, type=b.USER_PROMPT, turn_id="t1", author="user", text="Where is my order?"),
    ]
    for nb in reply.blocks:
        rows.append(
            Block(
                seq=len(rows) + 1,
                type=nb.type,
                turn_id="t1",
                author=nb.author,
                mime=nb.mime,
                text=nb.text,
                meta=nb.meta,
            )
        )
    for call in reply.calls:
        meta = {"tool_call_id": call.tool_call_id}
        rows.append(
            Block(seq=len(rows) + 1, type=b.TOOL_RESULT, turn_id="t1", author="tool", text="ok", meta=meta)
        )
    return [Block(**{**row.__dict__, "tokens": block_tokens(row)}) for row in rows]


def _unique_ids(parts: list[dict[str, Any]], key: str, ids: list[str]) -> None:
    for k, part in enumerate(p for p in parts if key in p):
        part[key] = f"{ids[k % len(ids)]}_{k}"


# ---------------------------------------------------------------- Anthropic

ANTHROPIC_PART = st.one_of(
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": "sig" + s}, TEXTS, IDS),
    st.builds(lambda d: {"type": "redacted_thinking", "data": "enc" + d}, IDS),
    st.builds(lambda t: {"type": "text", "text": t}, TEXTS),
    st.builds(lambda n, a: {"type": "tool_use", "id": "", "name": n, "input": a}, NAMES, ARGS),
)


@st.composite
def anthropic_replies(draw: Any) -> dict[str, Any]:
    parts = draw(st.lists(ANTHROPIC_PART, max_size=7))
    _unique_ids(parts, "id", draw(st.lists(IDS, min_size=1, max_size=3)))
    message = {
        "id": "msg_" + draw(IDS),
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": parts,
        "stop_reason": draw(st.sampled_from(["end_turn", "tool_use", "refusal", "max_tokens"])),
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return anthropic.types.Message.model_validate(message).model_dump(mode="json")


def anthropic_expected(reply: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for part in reply["content"]:
        if part["type"] == "thinking":
            out.append({"type": "thinking", "thinking": part["thinking"], "signature": part["signature"]})
        elif part["type"] == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": part["data"]})
        elif part["type"] == "text" and part["text"].strip():
            out.append({"type": "text", "text": part["text"]})
        elif part["type"] == "tool_use":
            out.append({"type": "tool_use", "id": part["id"], "name": part["name"], "input": part["input"]})
    out.sort(key=lambda p: p["type"] not in ("thinking", "redacted_thinking"))
    return [{"role": "assistant", "content": out}] if out else []


@settings(max_examples=examples(500), deadline=None)
@given(reply=anthropic_replies())
def test_an_anthropic_reply_renders_back_as_the_same_assistant_message(reply):
    messages = render_native(stored(reply), format="anthropic_messages").request["messages"]
    assert [m for m in messages if m["role"] == "assistant"] == anthropic_expected(reply)


# ---------------------------------------------------------------- OpenAI Responses

RESPONSES_ITEM = st.one_of(
    st.builds(
        lambda s, e: {
            "type": "reasoning",
            "id": "",
            "summary": [{"type": "summary_text", "text": t} for t in s],
            **e,
        },
        st.lists(TEXTS, max_size=2),
        st.one_of(st.just({}), st.builds(lambda x: {"encrypted_content": "enc" + x}, IDS)),
    ),
    st.builds(
        lambda parts: {
            "type": "message",
            "id": "",
            "role": "assistant",
            "status": "completed",
            "content": parts,
        },
        st.lists(
            st.one_of(
                st.builds(lambda t: {"type": "output_text", "text": t, "annotations": []}, TEXTS),
                st.builds(lambda t: {"type": "refusal", "refusal": t}, TEXTS),
            ),
            min_size=1,
            max_size=2,
        ),
    ),
    st.builds(
        lambda n, a, spaced: {
            "type": "function_call",
            "call_id": "",
            "name": n,
            "arguments": json.dumps(a, indent=1 if spaced else None),
        },
        NAMES,
        ARGS,
        st.booleans(),
    ),
)


@st.composite
def responses_replies(draw: Any) -> dict[str, Any]:
    items = draw(st.lists(RESPONSES_ITEM, max_size=7))
    ids = draw(st.lists(IDS, min_size=1, max_size=3))
    _unique_ids(items, "call_id", ids)
    for k, item in enumerate(items):
        if "id" in item:
            item["id"] = f"it_{k}"
    response = {
        "id": "resp_" + draw(IDS),
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "output": items,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return openai.types.responses.Response.model_validate(response).model_dump(mode="json")


def responses_expected(reply: dict[str, Any]) -> list[dict[str, Any]]:
    # The reply as a run of entries: reasoning, texts, calls (as the model gave them).
    entries: list[tuple[str, Any]] = []
    for item in reply["output"]:
        if item["type"] == "reasoning":
            native = {
                "type": "reasoning",
                "id": item["id"],
                "summary": [{"type": "summary_text", "text": s["text"]} for s in item["summary"]],
            }
            if item.get("encrypted_content") is not None:
                native["encrypted_content"] = item["encrypted_content"]
            entries.append(("reasoning", native))
        elif item["type"] == "message":
            for part in item["content"]:
                text = part.get("text") if part["type"] == "output_text" else part.get("refusal")
                if text and text.strip():
                    entries.append(("text", text))
        elif item["type"] == "function_call":
            arguments = json.dumps(json.loads(item["arguments"]), sort_keys=True, ensure_ascii=False)
            entries.append(
                (
                    "call",
                    {
                        "type": "function_call",
                        "call_id": item["call_id"],
                        "name": item["name"],
                        "arguments": arguments,
                    },
                )
            )
    last = max((k for k, (kind, _) in enumerate(entries) if kind != "reasoning"), default=-1)
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for k, (kind, value) in enumerate(entries):
        if kind == "text":
            texts.append(value)
            continue
        if kind == "reasoning" and k > last:
            continue  # the API rejects a reasoning item without a following item
        if texts:
            out.append({"role": "assistant", "content": "\n\n".join(texts)})
            texts = []
        out.append(value)
    if texts:
        out.append({"role": "assistant", "content": "\n\n".join(texts)})
    return out


@settings(max_examples=examples(500), deadline=None)
@given(reply=responses_replies())
def test_an_openai_response_renders_back_as_the_same_output_items(reply):
    items = render_native(stored(reply), format="openai_responses").request["input"]
    mine = [i for i in items[1:] if i.get("type") != "function_call_output"]
    assert mine == responses_expected(reply)


# ---------------------------------------------------------------- OpenAI Chat


@st.composite
def chat_replies(draw: Any) -> dict[str, Any]:
    calls = [
        {"id": "", "type": "function", "function": {"name": draw(NAMES), "arguments": json.dumps(draw(ARGS))}}
        for _ in range(draw(st.integers(0, 4)))
    ]
    _unique_ids(calls, "id", draw(st.lists(IDS, min_size=1, max_size=3)))
    message: dict[str, Any] = {"role": "assistant", "content": draw(st.one_of(st.none(), TEXTS))}
    if calls:
        message["tool_calls"] = calls
    if draw(st.booleans()):
        message["refusal"] = draw(TEXTS)
    completion = {
        "id": "chatcmpl-" + draw(IDS),
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return openai.types.chat.ChatCompletion.model_validate(completion).model_dump(mode="json")


def chat_expected(reply: dict[str, Any]) -> list[dict[str, Any]]:
    message = reply["choices"][0]["message"]
    texts = [t for t in (message.get("content"), message.get("refusal")) if t and t.strip()]
    calls = [
        {
            "id": c["id"],
            "type": "function",
            "function": {
                "name": c["function"]["name"],
                "arguments": json.dumps(
                    json.loads(c["function"]["arguments"]), sort_keys=True, ensure_ascii=False
                ),
            },
        }
        for c in message.get("tool_calls") or []
    ]
    if not texts and not calls:
        return []
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        out["tool_calls"] = calls
    return [out]


@settings(max_examples=examples(500), deadline=None)
@given(reply=chat_replies())
def test_a_chat_completion_renders_back_as_the_same_assistant_message(reply):
    messages = render_native(stored(reply), format="openai_chat").request["messages"]
    assert [m for m in messages if m["role"] == "assistant"] == chat_expected(reply)


# ---------------------------------------------------------------- Gemini

SIGNATURES = st.one_of(st.none(), st.binary(min_size=1, max_size=9))


def _signed(part: dict[str, Any], signature: bytes | None) -> dict[str, Any]:
    return {**part, "thoughtSignature": base64.b64encode(signature).decode()} if signature else part


GEMINI_PART = st.one_of(
    st.builds(lambda t, s: _signed({"text": t, "thought": True}, s), TEXTS, SIGNATURES),
    st.builds(lambda t, s: _signed({"text": t}, s), TEXTS, SIGNATURES),
    st.builds(
        lambda n, a, with_id, s: _signed(
            {"functionCall": {"name": gemini_tool_name(n), "args": a, **({"id": ""} if with_id else {})}}, s
        ),
        NAMES,
        ARGS,
        st.booleans(),
        SIGNATURES,
    ),
)


@st.composite
def gemini_replies(draw: Any) -> dict[str, Any]:
    parts = draw(st.lists(GEMINI_PART, max_size=7))
    _unique_ids(
        [p["functionCall"] for p in parts if "functionCall" in p], "id", draw(st.lists(IDS, min_size=1))
    )
    response = {
        "responseId": "gem_" + draw(IDS),
        "modelVersion": "gemini-2.5-flash",
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    }
    sdk = google.genai.types.GenerateContentResponse.model_validate(response)
    # As the REST API sends it (camelCase, standard base64) or as the client sends the SDK object
    # (to_json_dict: snake_case, URL-safe base64).
    return sdk.to_json_dict() if draw(st.booleans()) else response


def gemini_expected(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply's model content as the request sends it back: empty texts left out (a signature
    on one with them: the APIs reject an empty part, and Gemini wants signatures back on function
    calls only), an empty unsigned thought too; a call without an id gets ``<responseId>-call-<k>``
    (escaped like every id); signatures as standard base64 on their parts."""
    sdk = google.genai.types.GenerateContentResponse.model_validate(reply)
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    calls = 0
    for part in sdk.candidates[0].content.parts or []:  # type: ignore[index,union-attr]
        signature = base64.b64encode(part.thought_signature).decode() if part.thought_signature else None
        if part.thought:
            native: dict[str, Any] = {"text": part.text or "", "thought": True}
        elif part.function_call is not None:
            calls += 1
            call_id = part.function_call.id or f"{sdk.response_id}-call-{calls}"
            native = {
                "function_call": {
                    "id": provider_tool_id(call_id, taken),
                    "name": part.function_call.name,
                    "args": part.function_call.args or {},
                }
            }
        elif part.text and part.text.strip():
            native = {"text": part.text}
        else:
            continue
        if not part.thought or native["text"] or signature:
            out.append({**native, **({"thought_signature": signature} if signature else {})})
    return [{"role": "model", "parts": out}] if out else []


@settings(max_examples=examples(500), deadline=None)
@given(reply=gemini_replies())
def test_a_gemini_reply_renders_back_as_the_same_model_content(reply):
    contents = render_native(stored(reply), format="gemini_contents").request["contents"]
    assert [c for c in contents if c["role"] == "model"] == gemini_expected(reply)


def test_the_shapes_the_issue_names_are_among_the_examples():
    """Text only, calls only, thinking + calls, parallel calls, a refusal, empty text: each once,
    written out, so a strategy change that loses one still leaves it tested."""
    shapes = [
        [{"type": "text", "text": "Done."}],
        [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}}],
        [
            {"type": "thinking", "thinking": "hm", "signature": "s1"},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {}},
            {
                "type": "tool_use",
                "id": "t2",
                "name": provider_tool_name("orders.lookup"),
                "input": {"order": 1},
            },
        ],
        [{"type": "text", "text": ""}],
        [],
    ]
    for k, content in enumerate(shapes):
        reply = {
            "id": f"msg_{k}",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": content,
            "stop_reason": "refusal" if not content else "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        messages = render_native(stored(reply), format="anthropic_messages").request["messages"]
        assert [m for m in messages if m["role"] == "assistant"] == anthropic_expected(reply)
