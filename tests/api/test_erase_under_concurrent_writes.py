"""Issue 20.1: erasing a conversation that agents keep writing to.

The erase (``DELETE …/conversations/{conv}/`` or the retention job) always wins: writers in flight
finish first, writers arriving meanwhile wait and then get a 404 (never a 500), and no row of the
conversation is left in any table. Real concurrency: threads with their own database connections,
so these run on PostgreSQL.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from compaction.summary import ExtractiveSummarizer
from tests.factories import SMALL, fill_to
from tests.services.compaction.helpers import make_timeline, needs_concurrent_db
from tests.services.compaction.summarizers import use
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Conversation, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_app.services.conversations import conversation_delete, conversations_expire
from timeline_app.tasks import compact_timeline

from .test_conversation_erase import fill, row_counts

# Real commits (the foreign keys are checked at commit on PostgreSQL), on separate connections.
pytestmark = pytest.mark.django_db(transaction=True)

DOOMED = "/api/v1/conversations/doomed"
# Every kind of write an agent makes to a conversation, each looping in its own thread.
WRITES: dict[str, Callable[[APIClient, str, int], Any]] = {
    "blocks": lambda client, who, n: client.post(
        f"{DOOMED}/blocks/",
        {"blocks": [{"type": "react.notes", "author": "react", "text": f"{who} {n}", "id": f"{who}-{n}"}]},
        format="json",
    ),
    "turns": lambda client, who, n: client.post(f"{DOOMED}/turns/", {"prompt": f"{who} {n}"}, format="json"),
    "messages": lambda client, who, n: client.post(
        f"{DOOMED}/contexts/attempt_a/messages/",
        {"messages": [{"role": "user", "content": f"{who} {n}"}]},
        format="json",
    ),
    "sources": lambda client, who, n: client.post(
        f"{DOOMED}/sources/", {"sources": [{"url": f"https://example.org/{who}/{n}"}]}, format="json"
    ),
    "hide": lambda client, who, n: client.post(
        f"{DOOMED}/hide/", {"path": "tc:turn_2.tc_2x0.result", "replacement_text": "[hidden]"}, format="json"
    ),
    "render": lambda client, who, n: client.post(f"{DOOMED}/render/", {}, format="json"),
}
AFTER_ERASE = 3  # requests each writer sends once the erase answered


class Writers:
    """One thread per kind of write, each looping until it has sent ``AFTER_ERASE`` requests after
    the erase answered. Records ``(sent after the erase, status or exception)`` per request."""

    def __init__(self, raw_key: str, kinds: list[str]):
        self.raw_key = raw_key
        self.erased = threading.Event()
        self.results: dict[str, list[tuple[bool, Any]]] = {kind: [] for kind in kinds}
        self.threads = [threading.Thread(target=self._loop, args=(kind,)) for kind in kinds]

    def _loop(self, kind: str) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.raw_key}")
        results = self.results[kind]
        try:
            after = 0
            for n in range(100_000):
                sent_after = self.erased.is_set()
                try:
                    outcome: Any = WRITES[kind](client, kind, n).status_code
                except Exception as exc:  # the test client re-raises a view's exception (a 500)
                    outcome = f"{type(exc).__name__}: {exc}"
                results.append((sent_after, outcome))
                after += sent_after
                if after >= AFTER_ERASE:
                    break
        finally:
            connection.close()

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        # Every writer is under way (has stored something) before the erase starts; the deadline
        # is only a way out if one never does (the assertions below then say which).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(
            sum(1 for _, outcome in results if outcome in (200, 201)) >= 2
            for results in self.results.values()
        ):
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.erased.set()
        for thread in self.threads:
            thread.join()

    def check(self) -> None:
        for kind, results in self.results.items():
            assert sum(1 for _, outcome in results if outcome in (200, 201)) >= 2, (kind, results[:5])
            assert all(outcome in (200, 201, 404) for _, outcome in results), (kind, results)
            late = [outcome for sent_after, outcome in results if sent_after]
            assert late == [404] * AFTER_ERASE, (kind, late)


def long_conversation(caller, conv: str, blocks: int) -> None:
    """``fill``'s one of everything, then ``blocks`` more in the main context."""
    fill(caller, conv)
    timeline = Timeline.objects.get(
        conversation__tenant=caller.tenant, conversation__public_id=conv, name="main"
    )
    for start in range(0, blocks, 500):
        batch = [
            NewBlock(type=b.NOTES, author="react", text=f"note {n} " * 5, client_id=f"bulk-{n}")
            for n in range(start, min(start + 500, blocks))
        ]
        blocks_append(timeline=timeline, blocks=batch)


@needs_concurrent_db
def test_an_erase_wins_against_agents_writing_every_kind_of_row(owner, make_caller):
    other = make_caller("globex")
    fill(owner, "keep")  # the same tenant's other conversation stays
    fill(other, "doomed")  # another tenant's conversation of the same id stays
    before = row_counts()
    long_conversation(owner, "doomed", 3_000)

    with Writers(owner.raw_key, list(WRITES)) as writers:
        response = owner.delete(f"{DOOMED}/")
    assert response.status_code == 204, response.content

    writers.check()
    assert row_counts() == before, "every row of the erased conversation, and only those, is gone"
    assert not Conversation.objects.filter(tenant=owner.tenant, public_id="doomed").exists()
    assert other.get(f"{DOOMED}/").json()["block_count"] > 0
    assert owner.get("/api/v1/conversations/keep/").json()["block_count"] > 0


@needs_concurrent_db
def test_the_retention_job_erases_a_conversation_an_agent_is_writing_to(owner, make_caller):
    other = make_caller("globex")
    fill(owner, "keep")
    fill(other, "doomed")
    before = row_counts()
    long_conversation(owner, "doomed", 3_000)
    now = timezone.now()
    # Retention runs 31 days from now: the conversations planted beforehand were active since.
    Conversation.objects.exclude(tenant=owner.tenant, public_id="doomed").update(
        last_activity_at=now + timedelta(days=10)
    )

    with Writers(owner.raw_key, ["blocks", "turns", "messages"]) as writers:
        expired = conversations_expire(now=now + timedelta(days=31), idle_days=30, batch=10)
    assert expired == 1

    writers.check()
    assert row_counts() == before
    assert other.get(f"{DOOMED}/").status_code == 200
    assert owner.get("/api/v1/conversations/keep/").status_code == 200


class ErasingSummarizer:
    """Extractive summaries, but the conversation is erased while the summary is written."""

    name = "erasing"
    model = "erasing-test"

    def __init__(self, conversation: Conversation):
        self.conversation = conversation

    def summarize(self, **kwargs: Any) -> str:
        conversation_delete(conversation=self.conversation)
        return ExtractiveSummarizer().summarize(**kwargs)


def test_a_compaction_whose_conversation_is_erased_meanwhile_ends_quietly(caplog):
    keep = make_timeline(public_id="keep")
    fill_to(keep, 3_800, 4_500)
    before = row_counts()
    timeline = make_timeline(public_id="doomed", settings=SMALL)
    fill_to(timeline, 3_800, 4_500)
    caplog.set_level(logging.INFO)

    with use(ErasingSummarizer(timeline.conversation)):
        result = compact_timeline(timeline.pk, "background", False)

    assert result["status"] == "skipped", result
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("erased" in r.getMessage() for r in caplog.records), "a clear line says why it stopped"
    assert row_counts() == before
    assert compact_timeline(timeline.pk, "background", False)["status"] == "skipped"
