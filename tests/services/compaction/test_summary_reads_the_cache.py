"""Compaction that reads the cache: while the context's last render is cached, the Anthropic
summary request starts with that render's prefix byte for byte (same parts, same breakpoints),
then the instruction; cold, it sends the transcript. The call's usage and cost go on the row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from compaction.summary.anthropic import AnthropicSummarizer
from compaction.summary.prompt import SYSTEM_PROMPT
from tests.anthropic_mock import ScriptedTransport, message, mock_client
from tests.factories import add_turns
from timeline_app.models import Compaction, RenderRecord
from timeline_app.rendering.request_head import request_head
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import compaction_run

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
SYSTEM = "You are a careful agent. " * 40
MODEL = "claude-sonnet-4-5"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
USAGE = {
    "input_tokens": 50,
    "output_tokens": 200,
    "cache_read_input_tokens": 9_000,
    "cache_creation_input_tokens": 0,
}


@pytest.fixture
def rendered(owner, conversation):
    add_turns(conversation.timelines.get(), 6, result_words=300)
    body = owner.post(f"{BASE}/render/", {"system": SYSTEM, "model": MODEL, "now": T0.isoformat()}).json()
    assert body["cache_points"], body
    return body


def compact(timeline, *, model=MODEL, at):
    rec = ScriptedTransport([message("## Goals / requests\n- keep going", usage=USAGE, model=MODEL)])
    summarizer = AnthropicSummarizer("sk-ant-test", model, client=mock_client(rec))
    outcome = compaction_run(
        timeline=timeline,
        settings=timeline_settings(timeline=timeline),
        trigger=Compaction.Trigger.MANUAL,
        force=True,
        summarizer=summarizer,
        now=at,
    )
    assert outcome.status == Compaction.Outcome.APPLIED, outcome
    return rec.bodies, Compaction.objects.get(pk=outcome.compaction_id)


def test_a_warm_cache_is_resent_byte_for_byte_then_the_instruction(rendered, timeline):
    bodies, row = compact(timeline, at=T0 + timedelta(minutes=2))
    body = bodies[0]
    assert body["system"] == SYSTEM
    content = body["messages"][0]["content"]
    end = max(rendered["cache_points"])
    assert content[:-1] == rendered["blocks"][: end + 1]  # the same parts, the same breakpoints
    assert "cache_control" not in content[-1]
    assert "Summarize the conversation above" in content[-1]["text"]
    assert row.summary_cache == "warm" and row.summary_usage["cache_read_input_tokens"] == 9_000
    # 50 × $3 + 9,000 × $0.30 + 200 × $15 per million = $0.00585
    assert row.summary_cost_usd == Decimal("0.00585")


def test_a_cold_cache_sends_the_transcript(rendered, timeline):
    bodies, row = compact(timeline, at=T0 + timedelta(minutes=6))
    assert bodies[0]["system"] == SYSTEM_PROMPT and "<transcript>" in bodies[0]["messages"][0]["content"]
    assert row.summary_cache == "cold" and row.summary_cost_usd == Decimal("0.00585")


def test_another_model_cannot_read_the_agents_cache(rendered, timeline):
    bodies, row = compact(timeline, model="claude-haiku-4-5", at=T0 + timedelta(minutes=1))
    assert bodies[0]["system"] == SYSTEM_PROMPT and row.summary_cache == "cold"


def test_a_prefix_changed_since_the_render_is_not_resent(owner, rendered, timeline):
    hidden = owner.post(f"{BASE}/hide/", {"path": "tc:turn_1.tc_1x0.result", "replacement_text": "[gone]"})
    assert hidden.status_code == 200
    bodies, row = compact(timeline, at=T0 + timedelta(minutes=1))
    assert bodies[0]["system"] == SYSTEM_PROMPT and row.summary_cache == "cold"


def test_the_render_record_and_the_compaction_agree_on_the_request_head(rendered, timeline):
    """The render seeds its fingerprint with the head's digest and records it; the compaction
    builds the head again from the record's system prompt. Hashed differently at either end, the
    fingerprints never match and every summary goes cold."""
    record = RenderRecord.objects.get(timeline=timeline)
    rebuilt = request_head(system_text=record.system_text)  # as ``summary_cache_prefix`` does
    assert record.system_text == SYSTEM
    assert record.render_inputs["system_digest"] == rebuilt.digest
    assert record.system_tokens == rebuilt.system_tokens
    _, row = compact(timeline, at=T0 + timedelta(minutes=1))
    assert row.summary_cache == "warm"
