"""Anthropic faults through the real SDK (a mocked HTTP transport): retries with backoff, then
the extractive fallback with the error recorded — and no key or prompt in the logs or the row."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import anthropic
import httpx2 as httpx  # the transport the anthropic SDK is built on here
import pytest
from django.forms.models import model_to_dict

from compaction.anthropic_summarizer import SYSTEM_PROMPT, AnthropicSummarizer
from compaction.tasks import compact_timeline
from timeline_app import services
from timeline_app.models import Block, Compaction
from timeline_app.rendering import blocks as b

from .helpers import fill_to, make_timeline
from .summarizers import use

pytestmark = pytest.mark.django_db

API_KEY = "sk-ant-api03-SECRET-never-logged-0123456789"
CANARY = "canary-prompt-text-7f3a"  # in a user prompt: must reach the API, never the logs
LLM_SUMMARY = "## Goals / requests\n- what the LLM wrote"


def message(text: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    )


def error(status: int, kind: str) -> httpx.Response:
    return httpx.Response(status, json={"type": "error", "error": {"type": kind, "message": kind}})


class Transport:
    """Answers each request with the next step of a script (the last one repeats)."""

    def __init__(self, *steps: httpx.Response | Callable[[], httpx.Response]):
        self.steps = steps
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        return step() if callable(step) else step


def summarizer(transport: Transport) -> AnthropicSummarizer:
    client = anthropic.Anthropic(
        api_key=API_KEY, max_retries=2, http_client=httpx.Client(transport=httpx.MockTransport(transport))
    )
    client._calculate_retry_timeout = lambda *args, **kwargs: 0.0  # type: ignore[method-assign]  # fast backoff
    return AnthropicSummarizer(API_KEY, "claude-test", client=client)


@pytest.fixture
def timeline():
    timeline = make_timeline()
    services.turn_start(timeline=timeline, turn_id="turn_0", prompt=f"Please remember {CANARY}.")
    fill_to(timeline, 3_800, 4_500)
    return timeline


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="compaction")
    caplog.set_level(logging.DEBUG, logger="celery")
    return caplog


def compact(timeline, transport: Transport) -> dict:
    with use(summarizer(transport)):
        return compact_timeline(timeline.pk)


def assert_nothing_secret_leaked(logs, record: Compaction) -> None:
    assert API_KEY not in logs.text
    assert CANARY not in logs.text
    assert SYSTEM_PROMPT[:60] not in logs.text
    assert API_KEY not in json.dumps(model_to_dict(record), default=str)


def test_a_429_is_retried_and_the_summary_comes_from_the_llm(timeline, logs):
    transport = Transport(error(429, "rate_limit_error"), message(LLM_SUMMARY))

    assert compact(timeline, transport)["status"] == "applied"

    record = Compaction.objects.get()
    split_turn_call = 1 if record.split_turn_id else 0
    assert len(transport.requests) == 2 + split_turn_call
    assert CANARY in transport.requests[0].content.decode(), "the transcript reaches the API"
    assert (record.summarizer, record.model, record.error) == ("anthropic", "claude-test", "")
    assert Block.objects.get(type=b.SUMMARY).text.startswith(LLM_SUMMARY)
    assert_nothing_secret_leaked(logs, record)


def test_an_api_that_stays_overloaded_falls_back_to_the_extractive_summary_and_records_why(timeline, logs):
    transport = Transport(error(529, "overloaded_error"))

    assert compact(timeline, transport)["status"] == "applied"

    assert len(transport.requests) == 3, "one try and max_retries=2 retries, then give up (once)"
    record = Compaction.objects.get()
    assert (record.status, record.summarizer, record.model) == ("applied", "extractive", "extractive-v1")
    assert "529" in record.error and "overloaded" in record.error
    assert record.split_turn_id, "the split-turn prefix was summarized too, without asking the API again"
    assert Block.objects.get(type=b.SUMMARY).text.startswith("# Conversation summary")
    assert_nothing_secret_leaked(logs, record)


def test_timeouts_are_retried_then_fall_back(timeline, logs):
    def timeout() -> httpx.Response:
        raise httpx.ReadTimeout("timed out")

    transport = Transport(timeout)

    assert compact(timeline, transport)["status"] == "applied"

    assert len(transport.requests) == 3
    record = Compaction.objects.get()
    assert record.summarizer == "extractive"
    assert "timeout" in record.error
    assert_nothing_secret_leaked(logs, record)


def test_a_timeout_then_success_uses_the_llm(timeline, logs):
    def timeout() -> httpx.Response:
        raise httpx.ReadTimeout("timed out")

    transport = Transport(timeout, message(LLM_SUMMARY))

    compact(timeline, transport)

    record = Compaction.objects.get()
    assert (record.summarizer, record.error) == ("anthropic", "")
