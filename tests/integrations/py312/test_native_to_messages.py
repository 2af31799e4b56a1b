"""The render → LangChain messages conversion alone (no server): what ChatAnthropic and ChatOpenAI
build from the converted messages is the render, cache markers and tool pairs included."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from timeline_client.langchain import message_id_of, native_to_messages, to_openai_message

from .scripted import ScriptedAnthropic, ScriptedOpenAI

EPHEMERAL = {"type": "ephemeral"}

ANTHROPIC = {
    "system": [{"type": "text", "text": "You are a travel agent.", "cache_control": EPHEMERAL}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Book Lisbon.", "cache_control": EPHEMERAL}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1", "name": "web_tools-2esearch", "input": {"q": "Lisbon"}},
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "hotels",
                    "input": {"city": "Lisbon"},
                    "cache_control": EPHEMERAL,
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 results"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "[no result stored]",
                    "is_error": True,
                },
                {"type": "text", "text": "Cheaper please."},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Looking again.", "cache_control": EPHEMERAL}],
        },
        {"role": "user", "content": "Thanks"},
    ],
}


def test_anthropic_render_round_trips_through_chatanthropic():
    system, messages = native_to_messages(
        "anthropic_messages", ANTHROPIC, tool_names=["web_tools.search", "hotels"]
    )
    assert isinstance(system, SystemMessage)
    assert [type(m) for m in messages] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        HumanMessage,
        AIMessage,
        HumanMessage,
    ]
    assert [c["name"] for c in messages[1].tool_calls] == ["web_tools.search", "hotels"], "names mapped back"
    assert [m.tool_call_id for m in messages[2:4]] == ["toolu_1", "toolu_2"]

    model = ScriptedAnthropic(model="claude-sonnet-4-5", api_key="sk-test")
    payload = model._get_request_payload([system, *messages])
    assert payload["system"] == ANTHROPIC["system"]
    sent = payload["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[0] == ANTHROPIC["messages"][0]
    assert [(b["type"], b.get("id")) for b in sent[1]["content"]] == [
        ("text", None),
        ("tool_use", "toolu_1"),
        ("tool_use", "toolu_2"),
    ]
    assert sent[1]["content"][1]["name"] == "web_tools.search"  # declared under this name by the agent
    results = sent[2]["content"]
    assert [(b["type"], b.get("tool_use_id"), b.get("is_error")) for b in results] == [
        ("tool_result", "toolu_1", False),
        ("tool_result", "toolu_2", True),
        ("text", None, None),
    ]
    # ChatAnthropic rebuilds tool_use blocks without cache_control: the marker moves onto the first
    # result right after the call, so the request keeps as many markers (4) as the render
    assert "cache_control" not in sent[1]["content"][2]
    assert results[0]["cache_control"] == EPHEMERAL
    assert sent[3]["content"] == ANTHROPIC["messages"][3]["content"]

    def count(body):
        return sum(
            "cache_control" in b
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
        ) + sum("cache_control" in b for b in body["system"])

    assert count(payload) == count(ANTHROPIC) == 4


def test_chat_render_round_trips_through_chatopenai():
    request = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Paris?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
            {"role": "system", "content": "Context note."},
            {"role": "user", "content": "Thanks"},
        ]
    }
    system, messages = native_to_messages("openai_chat", request, tool_names=["w"])
    payload = ScriptedOpenAI(model="gpt-4.1", api_key="sk-test")._get_request_payload([system, *messages])
    assert [(m["role"], m.get("tool_call_id")) for m in payload["messages"]] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("system", None),
        ("user", None),
    ]
    assert payload["messages"][2]["tool_calls"][0]["function"] == {
        "name": "w",
        "arguments": '{"city": "Paris"}',
    }


def test_responses_render_groups_calls_into_one_ai_message():
    request = {
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Paris and Rome?"}]},
            {"role": "assistant", "content": "Checking both."},
            {"type": "function_call", "call_id": "c1", "name": "w", "arguments": '{"city": "Paris"}'},
            {"type": "function_call", "call_id": "c2", "name": "w", "arguments": '{"city": "Rome"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "Sunny"},
            {"type": "function_call_output", "call_id": "c2", "output": "Rain"},
        ],
    }
    system, messages = native_to_messages("openai_responses", request, tool_names=["w"])
    assert system.content == "Be brief."
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage, ToolMessage]
    assert messages[1].text == "Checking both." and [c["id"] for c in messages[1].tool_calls] == ["c1", "c2"]
    model = ScriptedOpenAI(model="gpt-4.1", api_key="sk-test", use_responses_api=True)
    items = model._get_request_payload([system, *messages])["input"]
    kinds = [(i.get("type"), i.get("call_id")) for i in items]
    assert kinds[-4:] == [
        ("function_call", "c1"),
        ("function_call", "c2"),
        ("function_call_output", "c1"),
        ("function_call_output", "c2"),
    ]


def test_stored_messages_are_openai_messages_under_their_langchain_ids():
    ai = AIMessage(
        content=[{"type": "text", "text": "Let me check."}],
        tool_calls=[{"id": "c1", "name": "w", "args": {"a": 1}}],
        id="lc_run--1/2",
    )
    assert to_openai_message(ai) == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"a": 1}'}}],
    }
    assert message_id_of(ai, 0) == "lc_run--1_2"
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    shot = ToolMessage(content=[{"type": "text", "text": "shot: "}, image], tool_call_id="c2")
    assert (
        to_openai_message(shot)["content"]
        == 'shot: {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}'
    )
    failed = ToolMessage(content="boom", tool_call_id="c1", status="error", name="w")
    assert to_openai_message(failed) == {
        "role": "tool",
        "content": "[error] boom",
        "tool_call_id": "c1",
        "name": "w",
    }
    assert (
        message_id_of(HumanMessage("hi"), 3)
        == message_id_of(HumanMessage("hi"), 3)
        != message_id_of(HumanMessage("hi"), 4)
    )
