"""OpenAISummarizer through the real ``openai`` SDK, with a mocked HTTP transport: the same
contract as the Anthropic one (retries, fallback, nothing of the key in errors)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from compaction.summary import ExtractiveSummarizer, SummarizerError, summarize_with_fallback
from compaction.summary.openai import OpenAISummarizer
from compaction.summary.prompt import SYSTEM_PROMPT
from tests.anthropic_mock import ScriptedTransport
from tests.builders import Stream
from timeline_app.domain.blocks import Block

API_KEY = "sk-openai-test-DO-NOT-LEAK-0123456789"
BASE_URL = "http://vllm.internal:8000/v1"


def completion(text: str = "## Goals / requests\n- summary") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "served-model",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
    )


def error(status: int, code: str, message: str) -> httpx2.Response:
    return httpx2.Response(
        status, json={"error": {"message": message, "type": code, "code": code, "param": None}}
    )


def summarizer(rec: ScriptedTransport, *, max_retries: int = 2, **kwargs: Any) -> OpenAISummarizer:
    client = openai.OpenAI(
        api_key=API_KEY,
        base_url=BASE_URL,
        max_retries=max_retries,
        http_client=httpx2.Client(transport=httpx2.MockTransport(rec)),
    )
    client._calculate_retry_timeout = lambda *args, **kw: 0.0  # type: ignore[method-assign]
    return OpenAISummarizer(API_KEY, "served-model", client=client, **kwargs)


def blocks() -> list[Block]:
    s = Stream()
    s.turn("t1", calls=1)
    s.turn("t2", calls=1)
    return s.blocks


def user_text(body: dict[str, Any]) -> str:
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    return user["content"]


def run(s: OpenAISummarizer, **kwargs: Any) -> str:
    return s.summarize(
        **{"blocks": blocks(), "previous_summary": None, "max_tokens": 800, "purpose": "history", **kwargs}
    )


def test_request_shape_at_the_configured_base_url() -> None:
    rec = ScriptedTransport([completion("first"), completion("split")])
    s = summarizer(rec)
    assert run(s) == "first"
    assert run(s, previous_summary="first", max_tokens=400, purpose="split_turn") == "split"
    first, second = rec.bodies
    assert str(rec.requests[0].url) == f"{BASE_URL}/chat/completions"
    assert first["model"] == "served-model" and first["max_completion_tokens"] == 800
    assert "tc:t1.tc_t1_0.call" in user_text(first)
    assert "<previous_summary>\nfirst\n</previous_summary>" in user_text(second)
    assert "in progress" in user_text(second)
    assert rec.headers[0]["authorization"] == f"Bearer {API_KEY}"


def test_older_compatible_servers_get_max_tokens() -> None:
    rec = ScriptedTransport([completion()])
    run(summarizer(rec, token_limit_param="max_tokens"))
    assert rec.bodies[0]["max_tokens"] == 800 and "max_completion_tokens" not in rec.bodies[0]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_transient_errors_then_succeeds(status: int) -> None:
    rec = ScriptedTransport([error(status, "server_error", "slow down"), completion("after retry")])
    assert run(summarizer(rec)) == "after retry"
    assert len(rec.bodies) == 2


def test_always_failing_raises_a_short_error_after_the_configured_tries() -> None:
    rec = ScriptedTransport([error(503, "overloaded", f"busy, key {API_KEY}")])
    with pytest.raises(SummarizerError) as info:
        run(summarizer(rec, max_retries=3))
    assert len(rec.bodies) == 4
    assert str(info.value).startswith("openai API error 503")
    assert API_KEY not in str(info.value) and info.value.__cause__ is None


def test_context_too_long_retries_once_with_the_newer_half() -> None:
    def handler(body: dict[str, Any]) -> httpx2.Response:
        if "tc:t1." in user_text(body):
            return error(
                400, "context_length_exceeded", "This model's maximum context length is 8192 tokens."
            )
        return completion("shorter")

    rec = ScriptedTransport([handler])
    assert run(summarizer(rec)) == "shorter"
    assert len(rec.bodies) == 2 and "tc:t2." in user_text(rec.bodies[1])


def test_other_bad_requests_are_not_retried() -> None:
    rec = ScriptedTransport([error(400, "invalid_request_error", "bad parameter")])
    with pytest.raises(SummarizerError, match="400"):
        run(summarizer(rec))
    assert len(rec.bodies) == 1


def test_authentication_error_message_has_no_key() -> None:
    rec = ScriptedTransport([error(401, "invalid_api_key", f"Incorrect API key provided: {API_KEY}")])
    with pytest.raises(SummarizerError) as info:
        run(summarizer(rec))
    assert API_KEY not in str(info.value) and "401" in str(info.value)


def test_failure_falls_back_to_extractive_with_the_error_recorded() -> None:
    rec = ScriptedTransport([error(500, "server_error", "boom")])
    out = summarize_with_fallback(
        summarizer(rec, max_retries=1),
        ExtractiveSummarizer(),
        blocks=blocks(),
        previous_summary=None,
        max_tokens=800,
        purpose="history",
    )
    assert out.summarizer == "extractive" and out.error.startswith("openai API error 500")
    assert API_KEY not in repr(out)


def test_empty_response_is_an_error() -> None:
    with pytest.raises(SummarizerError, match="empty"):
        run(summarizer(ScriptedTransport([completion("  ")])))


def test_repr_does_not_show_the_key() -> None:
    assert API_KEY not in repr(summarizer(ScriptedTransport([completion()])))
