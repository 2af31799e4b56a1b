"""The erase wins against an in-flight compaction claim (issue 30): a background compaction's
claim (its ``Compaction`` row, inserted without the conversation lock) is uncommitted while
``DELETE …/conversations/{conv}/`` runs, and tries to commit after the erase deleted the
compaction rows but before the erase commits. The erase answers 204 and every row of the
conversation is gone; the claim fails its foreign key check after the erase and the task ends
quietly (never a 500, never an orphaned claim). Real transactions on separate connections:
PostgreSQL."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models.signals import post_save

from tests.factories import SMALL, fill_to
from tests.services.compaction.helpers import needs_concurrent_db
from timeline_app.models import Compaction, Conversation, Timeline
from timeline_app.services import conversations as conversation_services
from timeline_app.services.conversations import conversation_create
from timeline_app.tasks import compact_timeline

from .test_conversation_erase import row_counts

pytestmark = [pytest.mark.django_db(transaction=True), needs_concurrent_db]
DOOMED = "/api/v1/conversations/doomed/"
WAIT = 10.0  # the longest one side waits for the other's step
RACE = 3.0  # how long the erase holds still for the claim to commit between its deletes


def doomed_timeline(tenant) -> Timeline:
    conversation = conversation_create(tenant=tenant, public_id="doomed", settings=SMALL)
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    fill_to(timeline, 3_800, 4_500)  # past the soft threshold: a background compaction claims it
    return timeline


class Race:
    """Steps the claim and the erase into the order under test: the claim inserted and not yet
    committed; the erase's compaction rows deleted; the claim's commit attempted; the erase goes
    on (after ``RACE`` seconds when the claim's commit waits for the erase's locks)."""

    def __init__(self, timeline_id: int):
        self.timeline_id = timeline_id
        self.claim_inserted = threading.Event()
        self.compactions_deleted = threading.Event()
        self.claim_committed = threading.Event()
        self.claimer = threading.get_ident()
        self.outcome: dict[str, Any] = {}

    def on_claim(self, sender: Any, instance: Compaction, created: bool, **kwargs: Any) -> None:
        if not created or threading.get_ident() != self.claimer or instance.timeline_id != self.timeline_id:
            return
        transaction.on_commit(self.claim_committed.set)
        self.claim_inserted.set()
        assert self.compactions_deleted.wait(WAIT), "the erase never reached its deletes"

    def delete_rows(self, original: Any) -> Any:
        def delete_rows(model: Any, column: str, ids: list[int]) -> int:
            deleted = original(model, column, ids)
            if model is Compaction:
                self.compactions_deleted.set()
                self.claim_committed.wait(RACE)
            return int(deleted)

        return delete_rows

    def compact(self) -> None:
        self.claimer = threading.get_ident()
        try:
            self.outcome["result"] = compact_timeline(self.timeline_id, "background", False)
        except BaseException as exc:  # reported by the test
            self.outcome["error"] = exc
        finally:
            connection.close()


def test_the_erase_wins_against_a_claim_committing_between_its_deletes(
    owner, make_caller, monkeypatch, caplog
):
    other = make_caller("globex")
    kept = doomed_timeline(other.tenant)  # another tenant's conversation of the same id stays
    before = row_counts()
    timeline = doomed_timeline(owner.tenant)
    race = Race(timeline.pk)
    monkeypatch.setattr(
        conversation_services, "_delete_rows", race.delete_rows(conversation_services._delete_rows)
    )
    post_save.connect(race.on_claim, sender=Compaction, weak=False, dispatch_uid="erase-race")
    caplog.set_level(logging.INFO)
    try:
        claimer = threading.Thread(target=race.compact)
        claimer.start()
        assert race.claim_inserted.wait(WAIT), "the compaction never claimed"

        response = owner.delete(DOOMED)

        claimer.join(WAIT * 3)
    finally:
        post_save.disconnect(dispatch_uid="erase-race")
    assert response.status_code == 204, response.content
    assert "error" not in race.outcome, race.outcome
    assert race.outcome["result"]["status"] == "skipped", race.outcome
    assert not race.claim_committed.is_set(), "the claim's commit waited for the erase and failed"
    assert row_counts() == before, "every row of the erased conversation, and only those, is gone"
    assert not Conversation.objects.filter(tenant=owner.tenant, public_id="doomed").exists()
    assert not Compaction.objects.filter(timeline_id=timeline.pk).exists()
    assert Timeline.objects.filter(pk=kept.pk).exists()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
