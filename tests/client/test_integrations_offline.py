"""The integrations without a server: item ↔ message mapping, pair-safe limits, MCP wiring, layering."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp.server.mcpserver.exceptions import ToolError
from timeline_client import TimelineAPIError, TimelineClient
from timeline_client.mcp_server import _parser, build_server, main
from timeline_client.openai_agents import (
    ITEM_NAME,
    TimelineSession,
    item_to_message,
    keep_pairs,
    latest,
    message_to_item,
)

from compaction import strategies

ROOT = Path(__file__).resolve().parents[2]

ITEMS = [
    {"role": "user", "content": "Where is order 7?"},
    {"content": "plain, keys in another order", "role": "user"},
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Use tools."},
    {"role": "user", "content": [{"type": "input_text", "text": "look at this"}]},
    {"role": "user", "content": "with a NUL \x00 inside"},
    {"role": "user", "content": "a lone surrogate \ud800 here"},
    {"type": "message", "role": "user", "content": "typed easy input"},
    {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
    {"id": "rs_2", "type": "reasoning", "summary": [], "encrypted_content": "gAAA…"},
    {
        "id": "fc_1",
        "call_id": "call_1",
        "type": "function_call",
        "name": "lookup_order",
        "arguments": '{"order": 7}',
        "status": "completed",
    },
    {"call_id": "call_1", "type": "function_call_output", "output": '{"status": "shipped"}'},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Order 7 is shipped. Ünïcödé ✓", "annotations": []}],
    },
    {"id": "cu_1", "call_id": "call_2", "type": "computer_call", "action": {"type": "click", "x": 1, "y": 2}},
    {"call_id": "call_2", "type": "computer_call_output", "output": {"type": "computer_screenshot"}},
    {"id": "ws_1", "type": "web_search_call", "status": "completed"},
    {"type": "item_reference", "id": "msg_0"},
    {"role": "assistant", "content": "done"},
]


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: str(item.get("type") or item.get("role"))[:20])
def test_every_item_round_trips_exactly_through_a_valid_chat_message(item):
    message = item_to_message(item)
    assert message["role"] in ("user", "assistant", "system", "tool")
    content = str(message.get("content"))
    assert "\x00" not in content, "the service refuses a NUL character"
    content.encode("utf-8")  # nor a lone surrogate
    stored = {
        **json.loads(json.dumps(message)),
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "message_id": "m1",
    }
    assert message_to_item(stored) == item


def test_calls_become_tool_calls_and_outputs_tool_messages_so_strategies_keep_them_together():
    call, output = ITEMS[10], ITEMS[11]
    assert item_to_message(call)["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup_order", "arguments": '{"order": 7}'},
        }
    ]
    assert item_to_message(output)["tool_call_id"] == "call_1"
    assert item_to_message(output)["name"] == ITEM_NAME
    messages = [item_to_message(i) for i in [ITEMS[0], ITEMS[8], call, output, ITEMS[12]]]
    kept = strategies.truncate_oldest(messages, max_messages=2)
    assert kept == [4], "the service's strategy never starts at an output whose call it drops"
    assert strategies.truncate_oldest(messages, max_messages=3) == [2, 3, 4]


def test_rendered_messages_the_service_made_become_the_closest_items():
    summary = {"role": "user", "content": [{"type": "text", "text": "[path: ar:conv.summary] summary: …"}]}
    assert message_to_item(summary) == {"role": "user", "content": "[path: ar:conv.summary] summary: …"}
    hidden_output = {**item_to_message(ITEMS[11]), "content": "[hidden: read ar:msg.x]"}
    assert message_to_item(hidden_output) == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "[hidden: read ar:msg.x]",
    }
    hidden_call = {**item_to_message(ITEMS[10]), "content": "[hidden]"}
    assert message_to_item(hidden_call) == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup_order",
        "arguments": '{"order": 7}',
    }


def test_limits_and_pairs():
    user, reasoning, call, output, answer = ITEMS[0], ITEMS[8], ITEMS[10], ITEMS[11], ITEMS[12]
    second_call = {**call, "id": "fc_2", "call_id": "call_9"}
    second_output = {**output, "call_id": "call_9"}
    items = [user, reasoning, call, second_call, output, second_output, answer]
    assert latest(items, 1) == [answer]
    assert latest(items, 2) == [answer], "second_output's call is outside the window"
    assert latest(items, 3) == [answer], "output's call is outside the window too"
    assert latest(items, 5) == items[2:]
    assert latest(items, 0) == []
    assert latest(items, 100) == items
    assert keep_pairs([second_call, output, second_output, answer]) == [second_call, second_output, answer]
    assert keep_pairs([call]) == [call], "a call still waiting for its output stays"


def mock_client(answer) -> TimelineClient:
    return TimelineClient(
        "http://service", "tlk_x", http_client=httpx.Client(transport=httpx.MockTransport(answer))
    )


def test_a_session_is_empty_before_its_conversation_exists_but_a_wrong_url_is_an_error():
    def unknown(request: httpx.Request) -> httpx.Response:
        body = {"error": {"code": "not_found", "message": "conversation 'x' not found", "details": {}}}
        return httpx.Response(404, json=body)

    session = TimelineSession("x", client=mock_client(unknown))
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.pop_item()) is None
    assert asyncio.run(session.get_all_items()) == []

    def wrong_url(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, text="<html>Not Found</html>")

    with pytest.raises(TimelineAPIError, match="404 http_error"):
        asyncio.run(TimelineSession("x", client=mock_client(wrong_url)).get_items())


def test_add_items_creates_the_conversation_once_and_stores_sdk_models_as_json():
    from openai.types.responses import ResponseFunctionToolCall

    posted: list[tuple[str, dict]] = []

    def service(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        posted.append((request.url.path, body))
        if request.url.path == "/api/v1/conversations/":
            return httpx.Response(
                409, json={"error": {"code": "conflict", "message": "exists", "details": {}}}
            )
        stored = [
            {**m, "timestamp": "2026-01-01T00:00:00.000000Z", "message_id": f"m{i}"}
            for i, m in enumerate(body["messages"])
        ]
        return httpx.Response(201, json={"messages": stored})

    session = TimelineSession("orders", client=mock_client(service), settings={"max_tokens": 9000})
    call = ResponseFunctionToolCall(type="function_call", call_id="call_1", name="lookup", arguments="{}")
    asyncio.run(session.add_items([call]))  # a pydantic model: its JSON, unset fields left out
    asyncio.run(session.add_items([{"role": "user", "content": "hi"}]))
    asyncio.run(session.add_items([]))
    assert [path for path, _ in posted] == [
        "/api/v1/conversations/",
        "/api/v1/conversations/orders/contexts/main/messages/",
        "/api/v1/conversations/orders/contexts/main/messages/",
    ]
    assert posted[0][1] == {"id": "orders", "title": "", "settings": {"max_tokens": 9000}}
    (message,) = posted[1][1]["messages"]
    assert json.loads(message["content"]) == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": "{}",
    }
    assert posted[2][1] == {"messages": [{"role": "user", "content": "hi"}]}


def test_mcp_server_lists_the_tools_with_schemas_and_maps_service_errors():
    def app(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/blocks/"):
            body = {
                "error": {"code": "not_found", "message": "no block at path 'x'", "details": {"path": "x"}}
            }
            return httpx.Response(404, json=body)
        if request.url.path.endswith("/search/"):
            return httpx.Response(200, json={"results": []})
        return httpx.Response(
            200, json={"sources_pool": [{"sid": 1, "url": "https://a.example", "title": "A"}]}
        )

    client = TimelineClient(
        "http://service", "tlk_x", http_client=httpx.Client(transport=httpx.MockTransport(app))
    )
    server = build_server(client, "conv", "attempt_a")

    async def drive() -> None:
        tools = {tool.name: tool for tool in await server.list_tools()}
        assert set(tools) == {
            "timeline_read",
            "timeline_search",
            "timeline_hide",
            "timeline_unhide",
            "timeline_sources",
            "timeline_render",
            "timeline_record_reply",
            "timeline_record_tool_results",
            "timeline_revert_compaction",
        }
        assert tools["timeline_record_reply"].input_schema["required"] == ["response"]
        assert tools["timeline_hide"].input_schema["required"] == ["path", "replacement_text"]
        with pytest.raises(ToolError, match=r"no block at path 'x' \(HTTP 404 not_found\)"):
            await server.call_tool("timeline_read", {"path": "x"})
        found = await server.call_tool("timeline_search", {"query": "zebra"})
        assert "No stored block matches 'zebra'" in found.content[0].text
        sources = await server.call_tool("timeline_sources", {})
        assert json.loads(sources.content[0].text)[0]["url"] == "https://a.example"

    asyncio.run(drive())


def test_mcp_server_answers_a_tool_error_when_the_service_is_unreachable():
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = TimelineClient(
        "http://service", "tlk_x", http_client=httpx.Client(transport=httpx.MockTransport(down))
    )
    server = build_server(client, "conv")
    with pytest.raises(ToolError, match="the timeline service could not be reached: connection refused"):
        asyncio.run(server.call_tool("timeline_render", {"format": "text"}))


def test_mcp_cli_flags_environment_and_missing_values(monkeypatch, capsys):
    monkeypatch.setenv("TIMELINE_API_URL", "http://env")
    monkeypatch.setenv("TIMELINE_API_KEY", "tlk_env")
    monkeypatch.setenv("TIMELINE_CONVERSATION", "conv-env")
    monkeypatch.delenv("TIMELINE_CONTEXT", raising=False)
    args = _parser().parse_args([])
    assert (args.url, args.key, args.conversation, args.context) == (
        "http://env",
        "tlk_env",
        "conv-env",
        "main",
    )
    args = _parser().parse_args(["--url", "http://flag", "--context", "attempt_a"])
    assert (args.url, args.context) == ("http://flag", "attempt_a")
    monkeypatch.delenv("TIMELINE_CONVERSATION")
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "missing --conversation" in capsys.readouterr().err


CLIENT = ROOT / "timeline_app" / "client"
FORBIDDEN = (
    "django",
    "rest_framework",
    "celery",
    "timeline_app.models",
    "timeline_app.services",
    "timeline_app.api",
)


def test_the_client_and_its_integrations_import_no_django():
    for path in sorted(CLIENT.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not [m for m in names if m.startswith(FORBIDDEN)], path.name
    code = (
        "import sys, timeline_client.mcp_server, timeline_client.openai_agents; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'celery')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
