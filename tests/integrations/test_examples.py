"""Every integrations example of docs/integrations.md (files under docs/examples/), run as written
against a live server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from timeline_client import TimelineClient

from tests.integrations.conftest import EXAMPLES, Live, console_script
from tests.integrations.fake_openai import fake_responses_api

pytestmark = pytest.mark.e2e


def run_example(name: str, live: Live, cwd: Path, **extra_env: str) -> str:
    """Run one example file in a fresh interpreter, with the virtualenv's bin on PATH (as when
    it is active) and the key exported, as its docstring says."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "TIMELINE_API_URL": live.url,
        "TIMELINE_API_KEY": live.key,
        **extra_env,
    }
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


async def start_from_config(config: dict, live: Live) -> list[str]:
    """Launch the server the way an MCP client reads docs/examples/mcp_config.json."""
    entry = config["mcpServers"]["timeline"]
    env = {**entry["env"], "TIMELINE_API_URL": live.url, "TIMELINE_API_KEY": live.key}
    assert set(env) == set(entry["env"]), "the example sets exactly these variables"
    params = StdioServerParameters(command=console_script(entry["command"]), args=entry["args"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        rendered = await session.call_tool("timeline_render", {})
        assert not rendered.is_error, rendered.content
        assert "Is my order late?" in rendered.content[0].text
        return names


def test_every_integrations_example_runs(live: Live, tmp_path: Path):
    config = json.loads((EXAMPLES / "mcp_config.json").read_text(encoding="utf-8"))

    out = run_example("mcp_client.py", live, tmp_path).splitlines()
    assert out[0] == str(
        [
            "timeline_read",
            "timeline_search",
            "timeline_hide",
            "timeline_unhide",
            "timeline_revert_compaction",
            "timeline_sources",
            "timeline_render",
            "timeline_record_reply",
            "timeline_record_tool_results",
        ]
    )
    text = "\n".join(out)
    assert "- tc:turn_1.tc_1.result (react.tool.result): " in out[2], "the search hit names the path"
    assert "Hotel Ribeira, 95 EUR" in text
    assert "[hotel list: read tc:turn_1.tc_1.result]" in text, "the hide shows in the render"
    assert out[-1].startswith("True ") and "no block at path" in out[-1], "a bad path is a tool error"

    with TimelineClient(live.url, live.key) as api:
        api.create_conversation(id=config["mcpServers"]["timeline"]["args"][-1])
        api.start_turn("support-42", "Is my order late?", turn_id="turn_1")
    tools = asyncio.run(start_from_config(config, live))
    assert len(tools) == 9

    with fake_responses_api() as (base_url, requests):
        out = run_example(
            "openai_agents_runner.py",
            live,
            tmp_path,
            OPENAI_API_KEY="sk-test",
            OPENAI_BASE_URL=base_url,
            OPENAI_AGENTS_DISABLE_TRACING="1",
        ).splitlines()
    assert out == ["Order 1234 has shipped.", "It went with DHL."], "the second run knew the first"
    assert len(requests) == 3
    second_turn = requests[2]["input"]
    assert [i.get("type", i.get("role")) for i in second_turn] == [
        "user",
        "function_call",
        "function_call_output",
        "message",
        "user",
    ], "the model got the whole history from the service"
    with TimelineClient(live.url, live.key) as api:
        assert len(api.search("support-7", "DHL")) == 2, "the tool output and the answer are stored"

    out = run_example("openai_agents_session.py", live, tmp_path).splitlines()
    assert out == [
        "4 ['message', 'function_call', 'function_call_output', 'message']",
        "[{'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'It has shipped.'}]}]",
        "{'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'It has shipped.'}]}",
        "3",
        "[]",
    ]
    with TimelineClient(live.url, live.key) as api:
        stored = api.search("orders-1234", "shipped")
    # The two items that say "shipped" (the tool output and the popped answer): a pop hides one
    # block, a clear moves the view; neither deletes or rewrites a stored item.
    assert len(stored) == 2, "pop and clear change the view only: every item stays stored, once"
