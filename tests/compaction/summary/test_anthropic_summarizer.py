"""AnthropicSummarizer through the real SDK, with a mocked HTTP transport."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from compaction.summary import ExtractiveSummarizer, SummarizerError, summarize_with_fallback
from compaction.summary.anthropic import SYSTEM_PROMPT, AnthropicSummarizer
from tests.anthropic_mock import ScriptedTransport, error, message, mock_client
from tests.builders import Stream
from timeline_app.domain.blocks import Block

API_KEY = "sk-ant-test-DO-NOT-LEAK-0123456789"


def summarizer(handler: ScriptedTransport, *, max_retries: int = 2) -> AnthropicSummarizer:
    client = mock_client(handler, api_key=API_KEY, max_retries=max_retries)
    return AnthropicSummarizer(API_KEY, "claude-test", client=client)


def blocks() -> list[Block]:
    s = Stream()
    s.sized_turn("t1", calls=1)
    s.sized_turn("t2", calls=1)
    return s.blocks


def user_text(body: dict[str, Any]) -> str:
    (message,) = body["messages"]
    assert message["role"] == "user"
    content = message["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def test_request_shape_history_then_progressive_split_turn() -> None:
    rec = ScriptedTransport([message("first summary"), message("split summary")])
    s = summarizer(rec)
    assert (
        s.summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
        == "first summary"
    )
    out = s.summarize(
        blocks=blocks()[:3], previous_summary="first summary", max_tokens=400, purpose="split_turn"
    )
    assert out == "split summary"

    first, second = rec.bodies
    assert first["model"] == "claude-test" and first["max_tokens"] == 800
    assert first["system"] == SYSTEM_PROMPT
    assert "tc:t1.tc_t1_0.call" in user_text(first)
    assert "<previous_summary>" not in user_text(first)

    assert second["max_tokens"] == 400
    assert "<previous_summary>\nfirst summary\n</previous_summary>" in user_text(second)
    assert "PREVIOUS SUMMARY" in user_text(second)
    assert "in progress" in user_text(second)
    # The SDK authenticates with the key (the header name depends on the SDK version).
    assert API_KEY in (
        rec.headers[0].get("x-api-key", ""),
        rec.headers[0].get("authorization", "").removeprefix("Bearer "),
    )


@pytest.mark.parametrize(
    ("status", "type_"), [(429, "rate_limit_error"), (529, "overloaded_error"), (500, "api_error")]
)
def test_retries_transient_errors_then_succeeds(status: int, type_: str) -> None:
    rec = ScriptedTransport([error(status, type_, "slow down"), message("after retry")])
    out = summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
    assert out == "after retry"
    assert len(rec.bodies) == 2


def test_always_overloaded_raises_summarizer_error_after_the_configured_tries() -> None:
    rec = ScriptedTransport([error(529, "overloaded_error", "Overloaded")])
    with pytest.raises(SummarizerError) as info:
        summarizer(rec, max_retries=3).summarize(
            blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history"
        )
    assert len(rec.bodies) == 4  # the first try and three retries
    assert str(info.value) == "anthropic API error 529 (overloaded_error)"
    assert API_KEY not in str(info.value)
    assert info.value.__cause__ is None  # the SDK error (with the request) is not chained


def test_prompt_too_long_retries_once_with_the_newer_half() -> None:
    def handler(body: dict[str, Any]) -> httpx2.Response:
        if "tc:t1." in user_text(body):
            return error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
        return message("shorter")

    rec = ScriptedTransport([handler])
    out = summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
    assert out == "shorter"
    assert len(rec.bodies) == 2
    assert len(user_text(rec.bodies[1])) < len(user_text(rec.bodies[0]))
    assert "tc:t2." in user_text(rec.bodies[1])


def test_prompt_too_long_twice_gives_up() -> None:
    rec = ScriptedTransport(
        [error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")]
    )
    with pytest.raises(SummarizerError, match="400"):
        summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
    assert len(rec.bodies) == 2


def test_other_bad_requests_are_not_retried() -> None:
    rec = ScriptedTransport([error(400, "invalid_request_error", "max_tokens: bad")])
    with pytest.raises(SummarizerError, match="invalid_request_error"):
        summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
    assert len(rec.bodies) == 1


def test_authentication_error_message_has_no_key() -> None:
    rec = ScriptedTransport([error(401, "authentication_error", f"invalid x-api-key {API_KEY}")])
    with pytest.raises(SummarizerError) as info:
        summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")
    assert API_KEY not in str(info.value)
    assert "401" in str(info.value)


def test_failure_falls_back_to_extractive_with_the_error_recorded() -> None:
    rec = ScriptedTransport([error(529, "overloaded_error", "Overloaded")])
    out = summarize_with_fallback(
        summarizer(rec, max_retries=1),
        ExtractiveSummarizer(),
        blocks=blocks(),
        previous_summary=None,
        max_tokens=800,
        purpose="history",
    )
    assert out.summarizer == "extractive"
    assert out.error == "anthropic API error 529 (overloaded_error)"
    assert API_KEY not in repr(out)


def test_empty_response_is_an_error() -> None:
    rec = ScriptedTransport([message("   ")])
    with pytest.raises(SummarizerError, match="empty"):
        summarizer(rec).summarize(blocks=blocks(), previous_summary=None, max_tokens=800, purpose="history")


def test_repr_does_not_show_the_key() -> None:
    assert API_KEY not in repr(summarizer(ScriptedTransport([message()])))
