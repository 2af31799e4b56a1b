"""A LangChain v1 agent (``create_agent``) with ``TimelineMiddleware``: a scripted chat model that
records its inputs, one tool, the live service."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from timeline_client import Context as ServiceContext
from timeline_client.langchain import TimelineMiddleware, format_for_model

from .scripted import ScriptedAnthropic, ScriptedChat, ScriptedOpenAI

USAGE = {
    "input_tokens": 1200,
    "output_tokens": 30,
    "total_tokens": 1230,
    "input_token_details": {"cache_read": 1000},
}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 24 C"


def call(city: str, call_id: str, model: str = "scripted-1") -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"id": call_id, "name": "get_weather", "args": {"city": city}}],
        usage_metadata=USAGE,
        response_metadata={"model_name": model},
    )


def answer(text: str, model: str = "scripted-1") -> AIMessage:
    return AIMessage(content=text, usage_metadata=USAGE, response_metadata={"model_name": model})


def assert_pairs_whole(messages: list[BaseMessage]) -> None:
    """Every AI tool call is answered by ToolMessages right after it, every ToolMessage answers a
    call of the AI message before its run."""
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            ids = [c["id"] for c in message.tool_calls]
            following = messages[index + 1 : index + 1 + len(ids)]
            assert [m.tool_call_id for m in following if isinstance(m, ToolMessage)] == ids, messages
        if isinstance(message, ToolMessage):
            back = index - 1
            while back >= 0 and isinstance(messages[back], ToolMessage):
                back -= 1
            assert back >= 0 and isinstance(messages[back], AIMessage), messages
            assert message.tool_call_id in [c["id"] for c in messages[back].tool_calls], messages


def test_every_message_of_the_run_is_stored_with_its_id(client, conversation):
    model = ScriptedChat()
    model.answers(call("Paris", "call_1"), answer("It is sunny in Paris."))
    middleware = TimelineMiddleware(client, conversation)
    agent = create_agent(
        model, [get_weather], system_prompt="You are a weather bot.", middleware=[middleware]
    )
    state = agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]})

    stored = ServiceContext(client, conversation, "main").messages
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert [m.message_id for m in stored] == [m.id for m in state["messages"]]
    assert stored[1].tool_calls[0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert (stored[2].tool_call_id, stored[2].content, stored[2].name) == (
        "call_1",
        "Sunny in Paris, 24 C",
        "get_weather",
    )
    assert stored[3].content == "It is sunny in Paris."
    # what the model saw is the service's render: the system prompt, then the stored history
    assert [type(m).__name__ for m in model.inputs[1]] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert model.inputs[1][0].content == "You are a weather bot."


def test_a_resumed_thread_stores_nothing_twice(client, conversation):
    model = ScriptedChat()
    model.answers(call("Paris", "call_1"), answer("Sunny."), answer("You are welcome."))
    agent = create_agent(
        model,
        [get_weather],
        middleware=[TimelineMiddleware(client, conversation)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]}, config)
    # a new middleware (a restarted process) resumes the same thread: the whole state is sent again
    agent = create_agent(
        model,
        [get_weather],
        middleware=[TimelineMiddleware(client, conversation)],
        checkpointer=agent.checkpointer,
    )
    state = agent.invoke({"messages": [{"role": "user", "content": "Thanks"}]}, config)
    info = ServiceContext(client, conversation, "main").info()
    assert info["stored_message_count"] == len(state["messages"]) == 6
    assert [m.message_id for m in ServiceContext(client, conversation, "main").messages] == [
        m.id for m in state["messages"]
    ]


def test_a_compaction_between_two_runs_is_the_summary_the_model_sees(client, conversation):
    model = ScriptedChat()
    long_city = "Lisbon " + "and its old town " * 200
    model.answers(
        call(long_city, "call_1"), answer("Sunny in Lisbon."), call("Porto", "call_2"), answer("Porto too.")
    )
    middleware = TimelineMiddleware(
        client, conversation, settings={"max_tokens": 200000, "keep_recent_tokens": 60}
    )
    agent = create_agent(model, [get_weather], middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Lisbon? " + "Please. " * 300}]})

    done = client.compact(conversation, force=True, wait=True)
    assert done["status"] == "applied", done

    agent.invoke({"messages": [{"role": "user", "content": "And in Porto?"}]})
    first_input = model.inputs[2]
    summary = first_input[0]
    assert isinstance(summary, HumanMessage)
    assert summary.text.startswith("[CONVERSATION SUMMARY]") and "su:.conv.range.summary" in summary.text
    assert not any(m.text.startswith("Weather in Lisbon?") for m in first_input), (
        "the compacted turn is not handed raw"
    )
    assert "call_1" not in json.dumps(
        [getattr(m, "tool_calls", None) for m in first_input]
        + [getattr(m, "tool_call_id", None) for m in first_input]
    ), "the compacted call and its result left together"
    assert [type(m).__name__ for m in first_input] == ["HumanMessage", "AIMessage", "HumanMessage"]
    assert first_input[-1].text == "And in Porto?"
    for seen in model.inputs:
        assert_pairs_whole(seen)
    # the stored history is complete: compaction never deletes
    assert ServiceContext(client, conversation, "main").info()["stored_message_count"] == 8


def test_usage_is_reported_against_each_render(client, conversation):
    model = ScriptedChat()
    model.answers(call("Paris", "call_1"), answer("Sunny."))
    middleware = TimelineMiddleware(client, conversation)
    create_agent(model, [get_weather], middleware=[middleware]).invoke(
        {"messages": [{"role": "user", "content": "Paris?"}]}
    )
    report = middleware.last_usage_report
    assert report["render_id"] == middleware.last_render_id
    assert report["tokens"]["cache_read"] == 1000 and report["tokens"]["output"] == 30
    totals = client.usage(conversation)
    assert totals["renders"] == 2, "one report per model call"
    assert totals["tokens"]["cache_read"] == 2000 and totals["tokens"]["output"] == 60


@pytest.mark.parametrize("responses", [False, True])
def test_chatopenai_gets_its_format_with_calls_and_outputs_together(client, conversation, responses):
    model = ScriptedOpenAI(model="gpt-4.1", api_key="sk-test", use_responses_api=responses)
    assert format_for_model(model) == ("openai_responses" if responses else "openai_chat")
    model.answers(
        call("Paris", "call_1", "gpt-4.1"),
        call("Rome", "call_2", "gpt-4.1"),
        answer("Both sunny.", "gpt-4.1"),
    )
    agent = create_agent(
        model,
        [get_weather],
        system_prompt="Weather bot.",
        middleware=[TimelineMiddleware(client, conversation)],
    )
    agent.invoke({"messages": [{"role": "user", "content": "Paris and Rome?"}]})
    payload = model.payloads[-1]
    if responses:
        kinds = [(item.get("type"), item.get("call_id")) for item in payload["input"]]
        assert kinds[-4:] == [
            ("function_call", "call_1"),
            ("function_call_output", "call_1"),
            ("function_call", "call_2"),
            ("function_call_output", "call_2"),
        ]
    else:
        roles = [(m["role"], m.get("tool_call_id")) for m in payload["messages"]]
        assert roles == [
            ("system", None),
            ("user", None),
            ("assistant", None),
            ("tool", "call_1"),
            ("assistant", None),
            ("tool", "call_2"),
        ]


def test_chatanthropic_gets_the_render_with_its_cache_markers(client, conversation):
    model = ScriptedAnthropic(model="claude-sonnet-4-5", api_key="sk-test")
    assert format_for_model(model) == "anthropic_messages"
    rounds = [
        call(city, f"call_{i}", "claude-sonnet-4-5")
        for i, city in enumerate(["Paris", "Rome", "Oslo", "Lima", "Kyiv"])
    ]
    model.answers(*rounds, answer("All sunny.", "claude-sonnet-4-5"))
    middleware = TimelineMiddleware(client, conversation, settings={"cache_min_tokens": 1})
    agent = create_agent(
        model, [get_weather], system_prompt="You are a weather bot.", middleware=[middleware]
    )
    agent.invoke({"messages": [{"role": "user", "content": "Weather in five cities?"}]})

    render, payload = middleware.last_render, model.payloads[-1]
    assert (
        payload["system"]
        == render["system"]
        == [{"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}]
    )
    # ChatAnthropic's request is the render's, block for block, every marker in place; it only adds
    # the tool_result's default "is_error": false.
    expected = [
        {
            "role": m["role"],
            "content": [{"is_error": False, **b} if b["type"] == "tool_result" else b for b in m["content"]],
        }
        for m in render["messages"]
    ]
    assert payload["messages"] == expected
    marked = [b for m in payload["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) == len(render.render["cache_points"]) >= 2


def test_the_async_hooks_do_the_same(client, conversation):
    model = ScriptedChat()
    model.answers(call("Paris", "call_1"), answer("Sunny."))
    middleware = TimelineMiddleware(client, conversation)
    agent = create_agent(model, [get_weather], middleware=[middleware])
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Paris?"}]}))
    stored = ServiceContext(client, conversation, "main").messages
    assert [m.message_id for m in stored] == [m.id for m in state["messages"]]
    assert middleware.last_usage_report is not None
    assert_pairs_whole(model.inputs[1])
