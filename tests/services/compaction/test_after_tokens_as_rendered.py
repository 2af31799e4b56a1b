"""A compaction is accepted, and reports ``after_tokens``, by the context as the next render shows
it: the ``[TURN …] (continued)`` header a split cut makes the render add counts (issue 20: a
split turn reported 779 → 765 while the next render showed 789 tokens)."""

from __future__ import annotations

import pytest

from tests.factories import add_turn, add_turns
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock, tool_call_blocks
from timeline_app.models import Compaction, Timeline
from timeline_app.services.blocks import blocks_append

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
T0 = "2026-03-01T12:00:00Z"


def mid_round_current_turn(timeline: Timeline) -> None:
    """Four finished turns, then the current one: three finished rounds and a tool call whose
    result has not come back yet."""
    add_turns(timeline, 4, tool_calls=1, result_words=60)
    add_turn(timeline, 5, tool_calls=3, result_words=60, complete=False)
    pending = tool_call_blocks(
        turn_id="turn_5", tool_call_id="tc_5_pending", tool_id="web_tools.fetch", params={"u": "x"}, result=""
    )
    blocks_append(timeline=timeline, blocks=[blk for blk in pending if blk.type != b.TOOL_RESULT])
    blocks_append(
        timeline=timeline, blocks=[NewBlock(type=b.NOTES, author="react", turn_id="turn_5", text="waiting")]
    )


def test_a_split_turn_compaction_reports_the_next_renders_visible_tokens(owner, conversation):
    conversation.settings = {"max_tokens": 20_000, "keep_recent_tokens": 120}
    conversation.save(update_fields=["settings"])
    mid_round_current_turn(conversation.timelines.get())
    before = owner.post(f"{BASE}/render/", {"now": T0}).json()["tokens"]["visible"]

    compacted = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert compacted["status"] == "applied", compacted
    assert compacted["split_turn_id"] == "turn_5", "the cut lands inside the current turn"

    body = owner.post(f"{BASE}/render/", {"now": "2026-03-01T12:00:30Z"}).json()
    assert body["blocks"][1]["text"].startswith("[TURN turn_5] ts="), "the continued header"
    assert "(continued)" in body["blocks"][1]["text"]
    assert compacted["before_tokens"] == before
    assert compacted["after_tokens"] == body["tokens"]["visible"] < before
    record = Compaction.objects.get(status="applied")
    assert (record.before_tokens, record.after_tokens) == (before, body["tokens"]["visible"])
