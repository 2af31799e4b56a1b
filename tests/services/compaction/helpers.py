"""Compaction-shell helpers: a small-budget timeline, a planted background compaction, and threads
with their own connection.

Turns and ``fill_to`` come from ``tests/factories.py``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tests.factories import SMALL, TimelineFactory
from timeline_app.models import Compaction, Conversation, Timeline

# Threads that read while another thread's transaction writes: SQLite's in-memory test database
# (shared cache) answers "database table is locked" instead of waiting, so these run on PostgreSQL.
needs_concurrent_db = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
    reason="concurrent transactions need PostgreSQL (SQLite's in-memory test database fails them)",
)


def make_timeline(
    *, tenant: str = "shell", public_id: str | None = None, settings: dict[str, Any] | None = None
) -> Timeline:
    """The main context of a new conversation of ``tenant``, with the SMALL settings unless given."""
    return TimelineFactory(
        conversation__tenant__name=tenant,
        conversation__public_id=public_id,
        conversation__settings=SMALL if settings is None else settings,
    )


def background_compaction(
    timeline: Timeline, *, status: str = "running", before_tokens: int = 0
) -> Compaction:
    """A background compaction of ``timeline`` started now, in ``status`` (``before_tokens``: the
    size it saw, what a rejected one is compared with)."""
    return Compaction.objects.create(
        timeline=timeline,
        trigger="background",
        status=status,
        before_tokens=before_tokens,
        started_at=timezone.now(),
    )


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
