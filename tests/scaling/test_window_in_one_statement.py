"""The render's window in one statement on PostgreSQL (issue 38) reads what the compaction query
and then its window read: in every state a context can be in."""

from __future__ import annotations

import pytest

from tests.factories import add_turns
from tests.services.compaction.helpers import needs_concurrent_db
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.messages import POPPED_REASON
from timeline_app.models import Block, Timeline
from timeline_app.selectors.blocks import window_by_compaction

pytestmark = [needs_concurrent_db, pytest.mark.django_db]
BASE = "/api/v1/conversations/c1"


def same(timeline: Timeline) -> list:
    timeline.refresh_from_db()
    window = selectors.visible_window(timeline=timeline)
    assert window == window_by_compaction(timeline=timeline)
    return window


def test_the_window_in_one_statement_is_the_compaction_then_its_window(owner, outsider, conversation):
    timeline = Timeline.objects.get(conversation=conversation)
    add_turns(timeline, 6)
    assert same(timeline)  # never compacted
    # Another tenant's compacted conversation with the same public id: nothing of it is read.
    other = outsider.post("/api/v1/conversations/", {"id": "c1"})
    assert other.status_code == 201
    add_turns(Timeline.objects.get(conversation__tenant=outsider.tenant), 6)
    assert outsider.post(f"{BASE}/compact/", {"force": True, "wait": True}).status_code in (200, 202)

    assert owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).status_code in (200, 202)
    window = same(timeline)
    assert window[0].type == b.SUMMARY and sum(blk.type == b.SUMMARY for blk in window) == 1
    add_turns(timeline, 3)
    assert owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).status_code in (200, 202)
    window = same(timeline)
    assert window[0].type == b.SUMMARY  # the second summary, not the first

    # A hide, popped blocks, a binary payload: read alike.
    last = Block.objects.filter(timeline=timeline).exclude(type=b.SUMMARY).order_by("-seq")
    Block.objects.filter(pk=last[0].pk).update(hidden=True, replacement_text="[hidden]")
    Block.objects.filter(pk=last[1].pk).update(hidden=True, hidden_reason=POPPED_REASON)
    Block.objects.filter(pk=last[2].pk).update(data=b"\x00\x01binary", meta={"k": [1, {"x": None}]})
    window = same(timeline)
    assert last[1].seq not in {blk.seq for blk in window}

    # Cleared past the summary: no summary shown; cleared past everything: an empty window.
    summary_seq = window[0].seq
    add_turns(timeline, 1)
    Timeline.objects.filter(pk=timeline.pk).update(view_start_seq=summary_seq)
    assert same(timeline)[0].seq == summary_seq
    Timeline.objects.filter(pk=timeline.pk).update(view_start_seq=summary_seq + 1)
    cleared = same(timeline)
    assert cleared and all(blk.type != b.SUMMARY for blk in cleared)
    Timeline.objects.filter(pk=timeline.pk).update(view_start_seq=10**9)
    assert same(timeline) == []
