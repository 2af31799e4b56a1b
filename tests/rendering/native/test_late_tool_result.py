"""A tool result stored after later turns (a long tool that finished after the user spoke again,
and the assistant answered) is paired with its call in every native format: the provider sees
the call answered by its real result, never a synthetic "no result stored" error with the real
result as stray user text further down (issue 30)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.rendering.native.test_native_mapping import Stream, render
from timeline_app.domain import blocks as b
from timeline_app.rendering.native import NATIVE_FORMATS

RESULT = "LONG-RESULT-42: 3 flights found"


def late_result_stream() -> Stream:
    s = Stream()
    s.turn("t1", "find the flights")
    s.call("t1", "tc_long")  # a long search, still running when the user speaks again
    s.turn("t2", "are you still there?")
    s.add(type=b.ASSISTANT_COMPLETION, turn_id="t2", author="assistant", text="Still searching.")
    s.turn("t3", "ok, tell me when it is done")
    s.result("t1", "tc_long", RESULT)
    return s


def pairs(fmt: str, request: dict[str, Any]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(call id → tool name, call id → result text, every user-side text) of a native request."""
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    user_texts: list[str] = []
    if fmt == "anthropic_messages":
        for message in request["messages"]:
            for part in message["content"]:
                if part["type"] == "tool_use":
                    calls[part["id"]] = part["name"]
                elif part["type"] == "tool_result":
                    results[part["tool_use_id"]] = " ".join(c.get("text", "") for c in part["content"])
                elif message["role"] == "user" and part["type"] == "text":
                    user_texts.append(part["text"])
    elif fmt == "openai_chat":
        for message in request["messages"]:
            for call in message.get("tool_calls") or []:
                calls[call["id"]] = call["function"]["name"]
            if message["role"] == "tool":
                results[message["tool_call_id"]] = json.dumps(message["content"])
            elif message["role"] == "user":
                user_texts += [p["text"] for p in message["content"] if p["type"] == "text"]
    elif fmt == "gemini_contents":
        for content in request["contents"]:
            for part in content["parts"]:
                if "function_call" in part:
                    calls[part["function_call"]["id"]] = part["function_call"]["name"]
                elif "function_response" in part:
                    response = part["function_response"]
                    results[response["id"]] = json.dumps(response["response"])
                elif content["role"] == "user" and "text" in part:
                    user_texts.append(part["text"])
    else:
        for item in request["input"]:
            if item.get("type") == "function_call":
                calls[item["call_id"]] = item["name"]
            elif item.get("type") == "function_call_output":
                results[item["call_id"]] = json.dumps(item["output"])
            elif item.get("role") == "user":
                user_texts += [p["text"] for p in item["content"] if p["type"] == "input_text"]
    return calls, results, user_texts


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
def test_a_result_stored_after_later_turns_answers_its_call(fmt: str) -> None:
    request = render(late_result_stream().blocks, fmt)  # render() also checks the provider's rules

    calls, results, user_texts = pairs(fmt, request)
    assert list(calls) == ["tc_long"]
    assert list(results) == ["tc_long"]
    assert RESULT in results["tc_long"]
    text = json.dumps(request)
    assert "no result stored" not in text
    assert text.count("LONG-RESULT-42") == 1, "the result is not repeated as user text"
    assert not any("LONG-RESULT-42" in t for t in user_texts)
    assert any("are you still there?" in t for t in user_texts), "the later turns stay"


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
def test_the_same_call_without_its_result_yet_is_answered_by_the_synthetic_error(fmt: str) -> None:
    """The state one block earlier: the result is still pending, so the call gets the synthetic
    error result (every provider refuses an unanswered call); the late result then replaces it."""
    blocks = late_result_stream().blocks[:-1]

    _, results, _ = pairs(fmt, render(blocks, fmt))

    assert "no result stored for tool call tc_long" in results["tc_long"]
