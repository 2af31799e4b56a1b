"""``TimelineSession`` under the Agents SDK's own ``Runner``, against a live server.

The SDK's ``SQLiteSession`` runs the same scripted agent beside it as the reference: the model
must get exactly the same input from both stores, and both must hold exactly the same items.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.memory import Session
from timeline_client import TimelineClient
from timeline_client.openai_agents import TimelineSession, message_to_item

from tests.integrations.conftest import ROOT, Live
from tests.integrations.scripted_agent import ScriptedModel, build_agent, question, run_turns

pytestmark = pytest.mark.e2e

SESSION = "agents-orders"


def kinds(items: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        kind = item.get("type") or f"{item['role']} message"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def assert_pairs_whole(items: list[dict[str, Any]]) -> None:
    """Every function call has its output in ``items`` and every output its call, call first."""
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs), (calls, outputs)
    position = {i.get("call_id"): n for n, i in enumerate(items) if i.get("type") == "function_call"}
    for n, item in enumerate(items):
        if item.get("type") == "function_call_output":
            assert position[item["call_id"]] < n


def continue_in_subprocess(live: Live, first: int, expected: list[Any], tmp_path: Path) -> dict[str, Any]:
    expected_path, out_path = tmp_path / "expected.json", tmp_path / "out.json"
    expected_path.write_text(json.dumps(expected))
    command = [
        sys.executable,
        "-m",
        "tests.integrations.scripted_agent",
        live.url,
        live.key,
        SESSION,
        str(first),
        str(expected_path),
        str(out_path),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out_path.read_text())  # type: ignore[no-any-return]


async def scenario(live: Live, tmp_path: Path) -> None:
    client = TimelineClient(live.url, live.key)
    session = TimelineSession(
        SESSION, client=client, settings={"max_tokens": 20_000, "keep_recent_tokens": 900}
    )
    assert isinstance(session, Session), "implements the SDK's Session protocol"
    assert await session.get_items() == [] and await session.pop_item() is None, "empty before first use"
    reference = SQLiteSession(SESSION, str(tmp_path / "reference.sqlite3"))

    # ten turns through the SDK's Runner, each a reasoning item, a tool call (two in turns 4 and 8),
    # their outputs and a final message
    model, reference_model = ScriptedModel(), ScriptedModel()
    finals = await run_turns(build_agent(model), [session], range(1, 11))
    await run_turns(build_agent(reference_model), [reference], range(1, 11))
    assert model.inputs == reference_model.inputs, "the model got the same input as with SQLiteSession"
    assert len(model.inputs) == 20
    assert model.inputs[-1][0] == {"content": question(1), "role": "user"}, "turn 10 saw turn 1"
    assert "wombat8 parcel" in finals[7] and "wombat1008 parcel" in finals[7]
    items = await session.get_items()
    assert items == await reference.get_items(), "every item round-trips exactly"
    assert kinds(items) == {
        "user message": 10,
        "reasoning": 10,
        "function_call": 12,
        "function_call_output": 12,
        "message": 10,
    }
    assert client.conversation(SESSION)["settings"]["max_tokens"] == 20_000, "created on first use"

    # limit: the newest items, never an output without its call
    assert await session.get_items(limit=len(items) + 5) == items
    assert await session.get_items(limit=3) == items[-3:]  # call, output, message
    assert await session.get_items(limit=2) == items[-1:], "the cut moves past the split pair"
    assert await session.get_items(limit=0) == []

    # a new session object with the same id in a fresh process continues with the full history
    fresh = continue_in_subprocess(live, 11, items, tmp_path)
    assert fresh["django_imported"] is False, "the integration needs no Django"
    assert fresh["calls"] == 8
    await run_turns(build_agent(reference_model), [reference], range(11, 15))
    full = await reference.get_items()
    assert fresh["items"] == full
    assert await session.get_items() == full == await session.get_all_items()
    assert len(full) == 14 * 5 + 3 * 2

    # a forced compaction: old items come back as one summary, every call keeps its output
    compaction = client.compact(SESSION, force=True, wait=True)
    assert compaction["status"] == "applied" and compaction["compacted_tokens"] > 0, compaction
    compacted = await session.get_items()
    summary, *retained = compacted
    assert summary["role"] == "user" and isinstance(summary["content"], str)
    assert "ar:msg." in summary["content"], "the summary names the paths of what it covers"
    assert 0 < len(retained) < len(full) - 10
    assert retained == full[-len(retained) :], "the retained items are exactly the newest ones"
    assert retained[0].get("type") != "function_call_output"
    assert_pairs_whole(retained)
    assert await session.get_all_items() == full, "nothing is lost: every item stays stored"
    hits = [h for h in client.search(SESSION, "wombat1 parcel") if h["compacted"]]
    read_back = [
        message_to_item(block["meta"]["openai_message"])
        for hit in hits
        for block in client.read(SESSION, hit["path"])["blocks"]
    ]
    output_1 = next(i for i in full if i.get("type") == "function_call_output" and i["call_id"] == "call_1_a")
    assert output_1 in read_back, "a compacted tool output is found and reads back by path, exactly"

    # the agent goes on from the compacted history
    after_model = ScriptedModel()
    await run_turns(build_agent(after_model), [session], range(15, 17))
    assert after_model.inputs[0] == [*compacted, {"content": question(15), "role": "user"}]
    assert_pairs_whole(await session.get_items())
    everything = await session.get_all_items()
    assert everything[: len(full)] == full and len(everything) == len(full) + 5 + 7  # turn 16 has two calls

    # another strategy: its view, tool pairs whole
    session.context.set_strategy("truncate_oldest", max_messages=6)
    view = await session.get_items()
    assert 0 < len(view) <= 6 and view == everything[-len(view) :]
    assert_pairs_whole(view)
    session.context.set_strategy("summarize")

    # pop_item: removes and returns the most recent item; the compaction stays
    compacted_view = await session.get_items()
    popped = await session.pop_item()
    assert popped == everything[-1] and popped["type"] == "message"
    assert await session.get_all_items() == everything[:-1]
    assert await session.get_items() == compacted_view[:-1], "the summary and the other items stay"
    popped_again = await TimelineSession(SESSION, client=client).pop_item()
    assert popped_again == everything[-2] and popped_again["type"] == "function_call_output"
    assert await session.get_items(limit=2) == [], "a cut inside a call group never leaves an orphan output"

    # clear_session: the session is empty (the service keeps the messages stored)
    await session.clear_session()
    assert await session.get_items() == [] and await session.get_all_items() == []
    assert await TimelineSession(SESSION, client=client).get_items() == []
    assert await session.pop_item() is None
    assert client.search(SESSION, "wombat2 parcel"), "cleared items stay stored and searchable"
    cleared_model = ScriptedModel()
    await run_turns(build_agent(cleared_model), [session], range(21, 22))
    assert cleared_model.inputs[0] == [{"content": question(21), "role": "user"}]
    assert len(await session.get_items()) == 5
    client.close()


def test_runner_on_a_timeline_session_across_processes_and_a_compaction(live: Live, tmp_path: Path):
    asyncio.run(scenario(live, tmp_path))
