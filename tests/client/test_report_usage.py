"""``client.report_usage(render, response)``: the SDK's response object (or its dict) reported in
one call, through the real Anthropic and OpenAI SDKs on a mocked HTTP transport."""

import httpx2
import openai
import pytest
from timeline_client import TimelineAPIError

from tests.anthropic_mock import ScriptedTransport, mock_client
from tests.factories import add_turns

pytestmark = pytest.mark.django_db
SYSTEM = "You are a careful research agent."


def anthropic_answer(usage):
    return httpx2.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        },
    )


def test_what_did_this_conversation_cost_and_why_in_five_lines(api, conversation):
    add_turns(conversation.timelines.get(), 4, result_words=400)
    cold = {
        "input_tokens": 40,
        "output_tokens": 500,
        "cache_creation_input_tokens": 9_000,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 9_000, "ephemeral_1h_input_tokens": 0},
    }
    warm = {
        **cold,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 9_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    }
    llm = mock_client(ScriptedTransport([anthropic_answer(cold), anthropic_answer(warm)]))

    for now in ("2026-03-01T12:00:00Z", "2026-03-01T12:01:00Z"):
        # The README's five lines (with `now` pinned for the test):
        rendered = api.render("c1", system=SYSTEM, model="claude-sonnet-4-5", now=now)
        response = llm.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            system=SYSTEM,
            messages=[{"role": "user", "content": rendered["blocks"]}],
        )
        api.report_usage(rendered, response)
    totals = api.usage("c1")

    assert totals["renders"] == 2
    assert totals["tokens"]["cache_read"] == 9_000 and totals["tokens"]["cache_write_5m"] == 9_000
    # cold: 40×3 + 9,000×3.75 + 500×15 = 41,370; warm: 40×3 + 9,000×0.3 + 500×15 = 10,320 (µ$)
    assert totals["cost_usd"] == "0.05169"
    assert totals["cost_without_cache_usd"] == "0.06924"  # 2 × (9,040×3 + 500×15)
    assert totals["saved_usd"] == "0.01755"


def test_a_dict_or_a_bare_usage_object_works_and_repeating_is_safe(api, conversation):
    add_turns(conversation.timelines.get(), 2)
    rendered = api.render("c1")
    usage = {"input_tokens": 900, "output_tokens": 10}
    first = api.report_usage(rendered, {"model": "claude-haiku-4-5", "usage": usage})
    again = api.report_usage(rendered["render_id"], usage, model="claude-haiku-4-5")
    assert first == again and first["priced_model"] == "claude-haiku-4-5"
    with pytest.raises(TimelineAPIError) as conflict:
        api.report_usage(rendered, {**usage, "output_tokens": 11}, model="claude-haiku-4-5")
    assert conflict.value.status == 409


def test_an_openai_chat_completion_is_reported_from_a_named_context(api, conversation):
    api.transport.request(
        "POST",
        "/api/v1/conversations/c1/contexts/attempt_a/messages/",
        json={"messages": [{"role": "user", "content": "hello"}]},
    )
    rendered = api.render("c1", context="attempt_a", format="openai", model="gpt-4o-mini")
    chat = openai.OpenAI(
        api_key="test",
        http_client=httpx2.Client(
            transport=httpx2.MockTransport(
                lambda request: httpx2.Response(
                    200,
                    json={
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 1,
                        "model": "gpt-4o-mini-2024-07-18",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "hi"},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 2_048,
                            "completion_tokens": 20,
                            "total_tokens": 2_068,
                            "prompt_tokens_details": {"cached_tokens": 1_024},
                        },
                    },
                )
            )
        ),
    )
    response = chat.chat.completions.create(model="gpt-4o-mini", messages=rendered["blocks"])
    row = api.report_usage(rendered, response)
    assert row["context_name"] == "attempt_a" and row["priced_model"] == "gpt-4o-mini"
    # 1,024×0.15 + 1,024×0.075 + 20×0.60 = 242.4 µ$
    assert row["cost_usd"] == "0.0002424"
    assert api.usage("c1", context="attempt_a")["renders"] == 1


def test_a_render_made_elsewhere_needs_its_conversation(api, conversation):
    with pytest.raises(ValueError):
        api.report_usage("rnd_unknown", {"input_tokens": 1}, model="claude-sonnet-4-5")


def test_the_agents_session_reports_the_runs_usage_on_its_render(api):
    from types import SimpleNamespace

    from agents.usage import Usage
    from openai.types.responses.response_usage import InputTokensDetails
    from timeline_client.openai_agents import TimelineSession

    session = TimelineSession("agents-1", client=api)
    assert session.report_usage(SimpleNamespace()) is None  # no render yet
    session.add_items_sync([{"role": "user", "content": "Where is my order?"}])
    session.get_items_sync()
    usage = Usage(
        requests=1,
        input_tokens=3_000,
        output_tokens=100,
        total_tokens=3_100,
        input_tokens_details=InputTokensDetails(cached_tokens=2_048, cache_write_tokens=0),
    )
    result = SimpleNamespace(
        context_wrapper=SimpleNamespace(usage=usage), last_agent=SimpleNamespace(model="gpt-4.1")
    )
    row = session.report_usage(result)
    assert row["render_id"] == session.last_render_id
    assert row["tokens"]["cache_read"] == 2_048 and row["tokens"]["uncached_input"] == 952
    # 952×2 + 2,048×0.5 + 100×8 = 3,728 µ$
    assert row["cost_usd"] == "0.003728"
