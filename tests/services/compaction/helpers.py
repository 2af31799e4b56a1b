"""Building timelines of a known size through the services (the path the API takes)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from timeline_app import selectors
from timeline_app.models import Conversation, Tenant, Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.contributions import NewBlock
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.conversations import conversation_create

# Threads that read while another thread's transaction writes: SQLite's in-memory test database
# (shared cache) answers "database table is locked" instead of waiting, so these run on PostgreSQL.
needs_concurrent_db = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
    reason="concurrent transactions need PostgreSQL (SQLite's in-memory test database fails them)",
)

# max_tokens 5,000: the render compacts above 4,500 (threshold 0.9), the sweep above 3,750 (0.75).
SMALL = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}


def make_timeline(
    *, tenant: str = "shell", public_id: str | None = None, settings: dict[str, Any] | None = None
) -> Timeline:
    owner, _ = Tenant.objects.get_or_create(name=tenant)
    conversation = conversation_create(
        tenant=owner, public_id=public_id, settings=SMALL if settings is None else settings
    )
    return Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)


def add_turn(timeline: Timeline, number: int, *, calls: int = 2, words: int = 20) -> str:
    turn_id = f"turn_{number}"
    turn_start(timeline=timeline, turn_id=turn_id, prompt=f"Question {number}: find things.")
    rows: list[NewBlock] = []
    for call in range(calls):
        meta = {"tool_call_id": f"tc_{number}x{call}", "tool_id": "web_tools.web_search"}
        rows += [
            NewBlock(
                type=b.NOTES, author="react", turn_id=turn_id, text=f"searching {call}", meta=dict(meta)
            ),
            NewBlock(
                type=b.TOOL_CALL,
                author="react",
                turn_id=turn_id,
                mime="application/json",
                text=json.dumps({"q": f"query {number}.{call}"}),
                meta=dict(meta),
            ),
            NewBlock(
                type=b.TOOL_RESULT,
                author="tool",
                turn_id=turn_id,
                mime="application/json",
                text=json.dumps({"result": " ".join(f"w{number}_{call}_{i}" for i in range(words))}),
                meta={**meta, "status": "ok"},
            ),
        ]
    rows.append(
        NewBlock(type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text=f"Answer {number}.")
    )
    blocks_append(timeline=timeline, blocks=rows)
    return turn_id


def fill_to(timeline: Timeline, low: int, high: int | None = None) -> int:
    """Add turns until the visible tokens pass ``low`` (and check they stay under ``high``)."""
    number = 1 + sum(1 for blk in selectors.visible_window(timeline=timeline) if blk.type == b.TURN_HEADER)
    visible = selectors.timeline_visible_tokens(timeline=timeline)
    while visible <= low:
        add_turn(timeline, number)
        number += 1
        visible = selectors.timeline_visible_tokens(timeline=timeline)
    if high is not None:
        assert visible < high, f"overshot: {visible} tokens (wanted {low}..{high})"
    return visible


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Start ``target`` in a thread with its own database connection; the result or the
    exception lands in the returned dict under ``result`` / ``error``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = target()
        except BaseException as exc:  # reported by the test
            box["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def conversation_of(timeline: Timeline) -> Conversation:
    return Conversation.objects.get(pk=timeline.conversation_id)
