"""A message context renders back as valid provider input, tool pairs whole, compacted or not."""

from __future__ import annotations

import re
import uuid

import anthropic.types
import openai.types.chat
import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import TypeAdapter

from tests.budget import examples
from timeline_app.models import Block
from timeline_app.services.conversations import conversation_create

from .conftest import messages_url
from .generators import message_lists
from .test_messages_api import without_added

pytestmark = pytest.mark.django_db

OPENAI_MESSAGES = TypeAdapter(list[openai.types.chat.ChatCompletionMessageParam])
ANTHROPIC_MESSAGE = TypeAdapter(anthropic.types.MessageParam)


def conversation_url(context: str) -> str:
    return f"/api/v1/conversations/c1/contexts/{context}"


def assert_every_tool_message_follows_its_call(messages: list[dict]) -> None:
    """OpenAI's rule: a tool message answers a call of the assistant message before the tool run."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, f"tool result without its call: {message}"
        elif message["role"] == "assistant" and message.get("tool_calls"):
            open_calls = {c["id"] for c in message["tool_calls"]}
        else:
            open_calls = set()


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=message_lists())
def test_openai_render_of_a_context_validates_against_the_sdk_message_types(owner, conversation, messages):
    context = f"ctx_{uuid.uuid4().hex[:12]}"
    owner.post(messages_url(context), {"messages": messages})
    rendered = owner.post(f"{conversation_url(context)}/render/", {"format": "openai"}).json()["blocks"]
    OPENAI_MESSAGES.validate_python(rendered)
    assert rendered == without_added(owner.get(messages_url(context)).json()["messages"])
    assert_every_tool_message_follows_its_call(rendered)


def tool_round(i: int) -> list[dict]:
    return [
        {"role": "user", "content": f"question {i}: what is {i}+{i}?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{i}_a",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": f'{{"a": {i}, "b": {i}}}'},
                },
                {"id": f"call_{i}_b", "type": "function", "function": {"name": "search", "arguments": "{}"}},
            ],
        },
        {
            "role": "tool",
            "content": f'{{"result": {2 * i}}}',
            "name": "calculator",
            "tool_call_id": f"call_{i}_a",
        },
        {"role": "tool", "content": "nothing found " * 5, "name": "search", "tool_call_id": f"call_{i}_b"},
        {"role": "assistant", "content": f"The answer is {2 * i}."},
    ]


def test_anthropic_render_of_a_context_pairs_every_tool_result_with_its_call(owner, conversation):
    messages = [{"role": "system", "content": "be brief"}, *[m for i in range(4) for m in tool_round(i)]]
    owner.post(messages_url("work"), {"messages": messages})
    parts = owner.post(f"{conversation_url('work')}/render/", {"format": "anthropic"}).json()["blocks"]
    ANTHROPIC_MESSAGE.validate_python({"role": "user", "content": parts})
    texts = [p["text"] for p in parts]
    assert len(texts) == len(messages), "one part per message"
    calls_seen: set[str] = set()
    results = 0
    for text in texts:
        calls_seen.update(re.findall(r"^\[tool call (\S+)\]", text, flags=re.MULTILINE))
        if text.startswith("[react.tool.result]"):
            (call_id,) = re.findall(r"^\[tool result (\S+)\]", text, flags=re.MULTILINE)
            assert call_id in calls_seen, f"result of {call_id} rendered before its call"
            results += 1
    assert results == 8
    assert "[path: ar:msg." in texts[0]


def test_summarize_compaction_of_a_context_never_starts_at_a_tool_result(owner, make_caller):
    conversation_create(
        tenant=owner.tenant,
        public_id="small",
        settings={"max_tokens": 1000, "keep_recent_tokens": 300, "summary_max_tokens": 100},
    )
    messages = [m for i in range(12) for m in tool_round(i)]
    owner.post("/api/v1/conversations/small/messages/", {"messages": messages})
    body = owner.post("/api/v1/conversations/small/render/", {"format": "openai"}).json()
    assert body["compaction"] is not None, "over the threshold: the seeds' compaction ran"
    rendered = body["blocks"]
    OPENAI_MESSAGES.validate_python(rendered)
    assert rendered[0]["role"] == "user" and "[CONVERSATION SUMMARY]" in rendered[0]["content"][0]["text"]
    assert rendered[1]["role"] != "tool"
    assert_every_tool_message_follows_its_call(rendered[1:])
    assert len(rendered) < len(messages)
    # Compaction deletes nothing: every message is still stored and still listed.
    assert (
        Block.objects.filter(timeline__conversation__public_id="small", type="react.tool.result").count()
        == 24
    )
    listed = owner.get("/api/v1/conversations/small/messages/").json()["messages"]
    assert without_added(listed) == messages


def test_render_shows_the_view_of_the_contexts_strategy(owner, conversation):
    context = "windowed"
    owner.post(messages_url(context), {"messages": [m for i in range(6) for m in tool_round(i)]})
    owner.client.patch(
        f"{conversation_url(context)}/",
        {"compaction_strategy": {"name": "truncate_oldest", "max_messages": 4}},
        format="json",
    )
    listed = without_added(owner.get(messages_url(context)).json()["messages"])
    rendered = owner.post(f"{conversation_url(context)}/render/", {"format": "openai"}).json()["blocks"]
    assert rendered == listed
    assert len(rendered) < 6 * len(tool_round(0))
    assert_every_tool_message_follows_its_call(rendered)
    assert Block.objects.filter(timeline__name=context).count() == 6 * len(tool_round(0)), "nothing deleted"
