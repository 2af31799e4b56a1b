"""``timeline-mcp`` as a subprocess against a live server, driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from timeline_client import TimelineClient

from tests.e2e.conftest import free_port
from tests.integrations.conftest import ROOT, Live, console_script

pytestmark = pytest.mark.e2e

TOOLS = {
    "timeline_read",
    "timeline_search",
    "timeline_hide",
    "timeline_unhide",
    "timeline_sources",
    "timeline_render",
    "timeline_revert_compaction",
    "timeline_record_reply",
    "timeline_record_tool_results",
}
CONV = "mcp-harbour"
# The service and the client of this checkout (the client is in clients/python: with ROOT alone a
# worktree's subprocess imported the client the shared virtualenv's editable install points at).
CHECKOUT_PATH = f"{ROOT}{os.pathsep}{ROOT / 'clients' / 'python'}"


def tool_result(turn: int) -> str:
    rows = [f"row {i}: harbour crane {turn}.{i} lifted container {turn * 100 + i}" for i in range(40)]
    return json.dumps({"rows": rows, "marker": f"quokka{turn} manifest"})


def build_conversation(api: TimelineClient) -> dict[str, str]:
    """Six turns with one tool call each, then a forced compaction: early results are compacted."""
    api.create_conversation(id=CONV, settings={"max_tokens": 6000, "keep_recent_tokens": 1200})
    for turn in range(1, 7):
        turn_id = f"turn_{turn}"
        api.start_turn(CONV, f"Check the harbour manifest, step {turn}", turn_id=turn_id)
        meta = {"tool_call_id": f"tc_{turn}", "tool_id": "port.manifest"}
        api.contribute(
            CONV,
            [
                {
                    "type": "react.tool.call",
                    "author": "react",
                    "turn_id": turn_id,
                    "mime": "application/json",
                    "text": json.dumps({"step": turn}),
                    "meta": meta,
                    "id": f"tc_{turn}.call",
                },
                {
                    "type": "react.tool.result",
                    "author": "tool",
                    "turn_id": turn_id,
                    "mime": "application/json",
                    "text": tool_result(turn),
                    "meta": meta,
                    "id": f"tc_{turn}.result",
                },
                {
                    "type": "assistant.completion",
                    "author": "assistant",
                    "turn_id": turn_id,
                    "text": f"Step {turn} checked.",
                    "id": f"done_{turn}",
                },
            ],
        )
    api.add_sources(CONV, [{"url": "https://example.org/harbour", "title": "Harbour authority"}])
    result = api.compact(CONV, force=True, wait=True)
    assert result, "the forced compaction ran"
    first = api.read(CONV, "tc:turn_1.tc_1.result")["blocks"][0]
    hits = {h["path"]: h for h in api.search(CONV, "quokka1")}
    assert hits["tc:turn_1.tc_1.result"]["compacted"], "turn 1's tool result is compacted"
    rendered = api.render(CONV, format="text", debug=True)["debug"]
    assert "quokka1 manifest" not in rendered, "the compacted result is not in the render any more"
    assert "quokka6 manifest" in rendered, "the latest result is still visible"
    return {"compacted": first["path"], "visible": "tc:turn_6.tc_6.result"}


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


async def drive(params: StdioServerParameters, paths: dict[str, str]) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        listed = (await session.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        schemas = {t.name: t.input_schema for t in listed}
        for name, schema in schemas.items():
            assert schema["type"] == "object", name
        assert schemas["timeline_read"]["required"] == ["path"]
        assert schemas["timeline_read"]["properties"]["path"]["type"] == "string"
        assert sorted(schemas["timeline_hide"]["required"]) == ["path", "replacement_text"]
        assert schemas["timeline_search"]["required"] == ["query"]
        assert set(schemas["timeline_render"]["properties"]["format"]["enum"]) == {
            "text",
            "anthropic",
            "openai",
            "anthropic_messages",
            "openai_responses",
            "openai_chat",
            "gemini_contents",
        }
        assert not schemas["timeline_sources"].get("properties")
        descriptions = {t.name: t.description or "" for t in listed}
        assert "compacted" in descriptions["timeline_read"] and "hidden" in descriptions["timeline_read"]
        assert "compacted" in descriptions["timeline_search"]

        # a compacted tool result, read back by path
        read = await session.call_tool("timeline_read", {"path": paths["compacted"]})
        assert not read.is_error, text_of(read)
        assert "quokka1 manifest" in text_of(read) and f"[path: {paths['compacted']}]" in text_of(read)

        # a compacted phrase, found by search
        found = await session.call_tool("timeline_search", {"query": "quokka1"})
        assert not found.is_error
        assert paths["compacted"] in text_of(found) and "compacted" in text_of(found)
        nothing = await session.call_tool("timeline_search", {"query": "platypus"})
        assert not nothing.is_error and "No stored block" in text_of(nothing)

        # a hide shows in the next render
        before = await session.call_tool("timeline_render", {"format": "text"})
        assert "quokka6 manifest" in text_of(before)
        hidden = await session.call_tool(
            "timeline_hide",
            {"path": paths["visible"], "replacement_text": "[manifest 6 hidden: read it back]"},
        )
        assert not hidden.is_error, text_of(hidden)
        after = await session.call_tool("timeline_render", {"format": "text"})
        assert "[manifest 6 hidden: read it back]" in text_of(after)
        assert "quokka6 manifest" not in text_of(after)
        reread = await session.call_tool("timeline_read", {"path": paths["visible"]})
        assert "quokka6 manifest" in text_of(reread) and "hidden" in text_of(reread)

        # and an unhide undoes it from the next render on
        assert schemas["timeline_unhide"]["required"] == ["path"]
        shown = await session.call_tool("timeline_unhide", {"path": paths["visible"]})
        assert not shown.is_error, text_of(shown)
        assert f"1 block(s) at {paths['visible']} render in full" in text_of(shown)
        again = await session.call_tool("timeline_render", {"format": "text"})
        assert "quokka6 manifest" in text_of(again)
        assert "[manifest 6 hidden: read it back]" not in text_of(again)
        bad_unhide = await session.call_tool("timeline_unhide", {"path": "tc:turn_99.nothing.result"})
        assert bad_unhide.is_error and "404" in text_of(bad_unhide)

        as_openai = await session.call_tool("timeline_render", {"format": "openai"})
        rendered = json.loads(text_of(as_openai))
        assert rendered["tokens"]["visible"] > 0 and rendered["blocks"][0]["role"] == "user"
        as_gemini = await session.call_tool("timeline_render", {"format": "gemini_contents"})
        native = json.loads(text_of(as_gemini))
        assert native["request"]["contents"][0]["role"] == "user" and "config" in native["request"]
        assert native["ending"] in ("user", "continue_text")

        sources = await session.call_tool("timeline_sources", {})
        assert json.loads(text_of(sources))[0]["url"] == "https://example.org/harbour"

        # a bad path is a tool error with the service's message; the server keeps serving
        bad = await session.call_tool("timeline_read", {"path": "tc:turn_99.nothing.result"})
        assert bad.is_error
        assert "no block at path" in text_of(bad) and "404" in text_of(bad)
        bad_hide = await session.call_tool("timeline_hide", {"path": "", "replacement_text": "x"})
        assert bad_hide.is_error and "400" in text_of(bad_hide)
        bad_format = await session.call_tool("timeline_render", {"format": "pdf"})
        assert bad_format.is_error
        still = await session.call_tool("timeline_read", {"path": paths["compacted"]})
        assert not still.is_error and "quokka1 manifest" in text_of(still)


async def unknown_conversation(params: StdioServerParameters) -> str:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("timeline_render", {})
        assert result.is_error
        alive = await session.call_tool("timeline_sources", {})
        assert alive.is_error
        return text_of(result)


def test_timeline_mcp_over_stdio_against_a_live_server(live: Live):
    with TimelineClient(live.url, live.key) as api:
        paths = build_conversation(api)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": CHECKOUT_PATH,  # this checkout's code, whatever the script's install points at
        "TIMELINE_API_URL": live.url,
        "TIMELINE_API_KEY": live.key,
        "TIMELINE_CONVERSATION": CONV,
    }
    command = console_script("timeline-mcp")
    asyncio.run(drive(StdioServerParameters(command=command, args=[], env=env, cwd=str(ROOT)), paths))

    # flags instead of the environment; an unknown conversation is a tool error, not a crash
    flags = ["--url", live.url, "--key", live.key, "--conversation", "no-such-conv", "--context", "main"]
    message = asyncio.run(
        unknown_conversation(StdioServerParameters(command=command, args=flags, cwd=str(ROOT)))
    )
    assert "404" in message and "not found" in message.lower()


async def over_http(url: str, compacted: str) -> None:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        read_back = await session.call_tool("timeline_read", {"path": compacted})
        assert not read_back.is_error and "quokka1 manifest" in text_of(read_back)
        bad = await session.call_tool("timeline_read", {"path": "tc:turn_99.nothing.result"})
        assert bad.is_error and "no block at path" in text_of(bad)


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "timeline-mcp exited early"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("timeline-mcp did not listen in time")


def test_timeline_mcp_over_streamable_http(live: Live):
    with TimelineClient(live.url, live.key) as api:
        paths = build_conversation(api)
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": CHECKOUT_PATH,
        "TIMELINE_API_URL": live.url,
        "TIMELINE_API_KEY": live.key,
    }
    command = [console_script("timeline-mcp"), "--conversation", CONV, "--transport", "streamable-http"]
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        asyncio.run(over_http(f"http://127.0.0.1:{port}/mcp", paths["compacted"]))
    finally:
        process.terminate()
        process.wait(timeout=10)
