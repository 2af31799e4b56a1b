"""A 30-turn agent conversation through the Python client against a real server on PostgreSQL."""

from __future__ import annotations

import json

import pytest
from timeline_client import TimelineClient, attachment

from timeline_app.models import Compaction
from timeline_app.services.api_keys import api_key_create

pytestmark = pytest.mark.e2e

TURNS = 30


def tool_result(turn: int, call: int) -> str:
    rows = [f"row {i}: observation {turn}.{call}.{i} about the harbour district" for i in range(40)]
    return json.dumps({"result": rows, "marker": f"zebra{turn}x{call} lighthouse"})


def test_thirty_turn_agent_loop_compacts_and_keeps_everything_reachable(server):
    _, raw_key = api_key_create(tenant_name="e2e")
    with TimelineClient(server, raw_key) as api:
        api.create_conversation(
            id="agent", title="Harbour research", settings={"max_tokens": 8_000, "keep_recent_tokens": 2_500}
        )
        for turn in range(1, TURNS + 1):
            turn_id = f"turn_{turn:02d}"
            attachments = (
                [attachment(f"notes{turn}.txt", "text/plain", text=f"user notes for turn {turn}")]
                if turn % 5 == 0
                else []
            )
            api.start_turn(
                "agent", f"Step {turn}: research the harbour", turn_id=turn_id, attachments=attachments
            )
            for call in range(2):
                call_id = f"tc_{turn}x{call}"
                meta = {"tool_call_id": call_id, "tool_id": "web_tools.web_search"}
                api.contribute(
                    "agent",
                    [
                        {
                            "type": "react.tool.call",
                            "author": "react",
                            "mime": "application/json",
                            "text": json.dumps({"q": f"harbour {turn}"}),
                            "meta": meta,
                            "id": f"{call_id}.call",
                        },
                        {
                            "type": "react.tool.result",
                            "author": "tool",
                            "mime": "application/json",
                            "text": tool_result(turn, call),
                            "meta": {**meta, "status": "ok"},
                            "id": f"{call_id}.result",
                        },
                    ],
                )
            api.add_sources(
                "agent", [{"url": f"https://harbour.example/{turn}", "title": f"Harbour page {turn}"}]
            )
            rendered = api.render("agent", include_sources=True, system="You are a research agent.")
            assert rendered["tokens"]["total"] <= 8_000 + rendered["tokens"]["tail"]
            assert len(rendered["cache_points"]) <= 3
            api.contribute(
                "agent",
                [
                    {
                        "type": "assistant.completion",
                        "author": "assistant",
                        "text": f"Finished step {turn}.",
                        "id": f"{turn_id}.done",
                    }
                ],
            )

        applied = Compaction.objects.filter(
            timeline__conversation__public_id="agent", status="applied"
        ).count()
        assert applied >= 2, f"expected at least two compactions, saw {applied}"

        compacted = api.read("agent", "tc:turn_01.tc_1x0.result")["blocks"]
        assert "zebra1x0 lighthouse" in compacted[0]["text"]
        hits = api.search("agent", "zebra2x1")
        assert any(hit["path"] == "tc:turn_02.tc_2x1.result" and hit["compacted"] for hit in hits)
        final = api.render("agent", format="text", debug=True)
        assert final["debug"].startswith("[CONVERSATION SUMMARY]")
        assert len(api.sources("agent")) == TURNS
