"""Anthropic faults through the real SDK (a mocked HTTP transport): retries with backoff, then
the extractive fallback with the error recorded — and no key or prompt in the logs or the row."""

from __future__ import annotations

import json
import logging

import httpx2  # the transport the anthropic SDK is built on here
import pytest
from django.forms.models import model_to_dict

from compaction.summary.anthropic import SYSTEM_PROMPT, AnthropicSummarizer
from tests.anthropic_mock import ScriptedTransport, error, message, mock_client
from tests.factories import fill_to
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction
from timeline_app.services.blocks import turn_start
from timeline_app.tasks import compact_timeline

from .helpers import make_timeline
from .summarizers import use

pytestmark = pytest.mark.django_db

API_KEY = "sk-ant-api03-SECRET-never-logged-0123456789"
CANARY = "canary-prompt-text-7f3a"  # in a user prompt: must reach the API, never the logs
LLM_SUMMARY = "## Goals / requests\n- what the LLM wrote"


def summarizer(transport: ScriptedTransport) -> AnthropicSummarizer:
    return AnthropicSummarizer(
        API_KEY, "claude-test", client=mock_client(transport, api_key=API_KEY, max_retries=2)
    )


def timeout(body: dict) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out")


@pytest.fixture
def timeline():
    timeline = make_timeline()
    turn_start(timeline=timeline, turn_id="turn_0", prompt=f"Please remember {CANARY}.")
    fill_to(timeline, 3_800, 4_500)
    return timeline


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="compaction")
    caplog.set_level(logging.DEBUG, logger="celery")
    return caplog


def compact(timeline, transport: ScriptedTransport) -> dict:
    with use(summarizer(transport)):
        return compact_timeline(timeline.pk)


def assert_nothing_secret_leaked(logs, record: Compaction) -> None:
    assert API_KEY not in logs.text
    assert CANARY not in logs.text
    assert SYSTEM_PROMPT[:60] not in logs.text
    assert API_KEY not in json.dumps(model_to_dict(record), default=str)


def test_a_429_is_retried_and_the_summary_comes_from_the_llm(timeline, logs):
    transport = ScriptedTransport([error(429, "rate_limit_error"), message(LLM_SUMMARY)])

    assert compact(timeline, transport)["status"] == "applied"

    record = Compaction.objects.get()
    split_turn_call = 1 if record.split_turn_id else 0
    assert len(transport.requests) == 2 + split_turn_call
    assert CANARY in transport.requests[0].content.decode(), "the transcript reaches the API"
    assert (record.summarizer, record.model, record.error) == ("anthropic", "claude-test", "")
    assert Block.objects.get(type=b.SUMMARY).text.startswith(LLM_SUMMARY)
    assert_nothing_secret_leaked(logs, record)


def test_an_api_that_stays_overloaded_falls_back_to_the_extractive_summary_and_records_why(timeline, logs):
    transport = ScriptedTransport([error(529, "overloaded_error")])

    assert compact(timeline, transport)["status"] == "applied"

    assert len(transport.requests) == 3, "one try and max_retries=2 retries, then give up (once)"
    record = Compaction.objects.get()
    assert (record.status, record.summarizer, record.model) == ("applied", "extractive", "extractive-v1")
    assert "529" in record.error and "overloaded" in record.error
    assert record.split_turn_id, "the split-turn prefix was summarized too, without asking the API again"
    assert Block.objects.get(type=b.SUMMARY).text.startswith("# Conversation summary")
    assert_nothing_secret_leaked(logs, record)


def test_timeouts_are_retried_then_fall_back(timeline, logs):
    transport = ScriptedTransport([timeout])

    assert compact(timeline, transport)["status"] == "applied"

    assert len(transport.requests) == 3
    record = Compaction.objects.get()
    assert record.summarizer == "extractive"
    assert "timeout" in record.error
    assert_nothing_secret_leaked(logs, record)


def test_a_timeout_then_success_uses_the_llm(timeline, logs):
    transport = ScriptedTransport([timeout, message(LLM_SUMMARY)])

    compact(timeline, transport)

    record = Compaction.objects.get()
    assert (record.summarizer, record.error) == ("anthropic", "")
