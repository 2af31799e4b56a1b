"""``timeline-mcp`` bound to a named context (``--context`` or ``TIMELINE_CONTEXT``): a real stdio
subprocess against a live server, driven by the MCP SDK's client. Its tools act on that context
only; the flag wins over the variable."""

from __future__ import annotations

import asyncio
import os

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from timeline_client import TimelineClient

from tests.integrations.conftest import ROOT, Live, console_script
from timeline_app.services.api_keys import api_key_create

pytestmark = pytest.mark.e2e

CONV = "mcp-contexts"
PATH = "tc:turn_1.tc_1.result"
HIDDEN = "[attempt result hidden: read it back]"


def plant(api: TimelineClient, context: str, word: str) -> None:
    """One turn with a tool result at ``PATH`` whose text names ``word``."""
    api.start_turn(CONV, f"Check the {word} manifest", turn_id="turn_1", context=context)
    meta = {"tool_call_id": "tc_1", "tool_id": "port.manifest"}
    api.contribute(
        CONV,
        [
            {"type": "react.tool.call", "turn_id": "turn_1", "text": "{}", "meta": meta, "id": "call"},
            {
                "type": "react.tool.result",
                "turn_id": "turn_1",
                "text": f"{word} manifest: 12 containers",
                "meta": meta,
                "id": "result",
            },
        ],
        context=context,
    )


def text_of(result) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "type", "") == "text")


async def read_search_hide(params: StdioServerParameters, *, hide: bool) -> dict[str, str]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out = {
            "read": text_of(await session.call_tool("timeline_read", {"path": PATH})),
            "search": text_of(await session.call_tool("timeline_search", {"query": "manifest"})),
        }
        if hide:
            hidden = await session.call_tool("timeline_hide", {"path": PATH, "replacement_text": HIDDEN})
            assert not hidden.is_error, text_of(hidden)
        out["render"] = text_of(await session.call_tool("timeline_render", {"format": "text"}))
        return out


def run(live: Live, *, flags: list[str], context_env: str | None, hide: bool = False) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),  # this checkout's code, not an installed copy
        "TIMELINE_API_URL": live.url,
        "TIMELINE_API_KEY": live.key,
        "TIMELINE_CONVERSATION": CONV,
    }
    if context_env is not None:
        env["TIMELINE_CONTEXT"] = context_env
    params = StdioServerParameters(command=console_script("timeline-mcp"), args=flags, env=env, cwd=str(ROOT))
    return asyncio.run(read_search_hide(params, hide=hide))


def test_timeline_mcp_acts_on_the_context_it_was_started_for(live: Live):
    with TimelineClient(live.url, live.key) as api:
        api.create_conversation(id=CONV)
        plant(api, "main", "walrus")
        plant(api, "attempt_a", "narwhal")
        main_before = api.render(CONV, format="text", debug=True)["debug"]
    # planted: another tenant's conversation of the same id, with an attempt_a of its own
    _, other_key = api_key_create(tenant_name="integrations-other")
    with TimelineClient(live.url, other_key) as other:
        other.create_conversation(id=CONV)
        plant(other, "attempt_a", "dugong")

    # --context attempt_a, no TIMELINE_CONTEXT: reads, searches, hides and renders attempt_a only
    flagged = run(live, flags=["--context", "attempt_a"], context_env=None, hide=True)
    assert "narwhal manifest" in flagged["read"] and "walrus" not in flagged["read"]
    assert "narwhal" in flagged["search"] and "walrus" not in flagged["search"]
    assert "dugong" not in flagged["read"] + flagged["search"], "another tenant's context"
    assert HIDDEN in flagged["render"] and "narwhal manifest: 12" not in flagged["render"]

    with TimelineClient(live.url, live.key) as api:
        assert api.render(CONV, format="text", debug=True)["debug"] == main_before, "main is unchanged"
        (main_block,) = api.read(CONV, PATH, include_hidden=True)["blocks"]
        assert not main_block["hidden"] and "walrus" in main_block["text"]
        (attempt_block,) = api.read(CONV, PATH, include_hidden=True, context="attempt_a")["blocks"]
        assert attempt_block["hidden"] and attempt_block["replacement_text"] == HIDDEN
    with TimelineClient(live.url, other_key) as other:
        (theirs,) = other.read(CONV, PATH, include_hidden=True, context="attempt_a")["blocks"]
        assert not theirs["hidden"], "the other tenant's attempt_a is untouched"

    # TIMELINE_CONTEXT=attempt_a alone: the same context (its block is hidden now)
    from_env = run(live, flags=[], context_env="attempt_a")
    assert "narwhal manifest" in from_env["read"] and "hidden" in from_env["read"]
    assert HIDDEN in from_env["render"] and "walrus" not in from_env["render"]

    # both: the flag wins over the variable
    both = run(live, flags=["--context", "main"], context_env="attempt_a")
    assert "walrus manifest" in both["read"] and "narwhal" not in both["read"]
    assert "walrus manifest: 12" in both["render"] and HIDDEN not in both["render"]
