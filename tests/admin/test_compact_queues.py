"""Issue 21: the admin's "compact" button and bulk action queue a compaction as
``POST …/compact/`` does (a ``queued`` row the worker finishes) and say so; no summarizer runs
in the admin's request (twenty inline LLM compactions outlived the gunicorn timeout). A staff
user scoped to one tenant cannot queue one for another tenant's conversation."""

from __future__ import annotations

from typing import Any

import pytest
from celery import current_app
from django.contrib.messages import get_messages

from tests.admin import urls
from tests.factories import ConversationFactory, TenantFactory, TimelineFactory, add_turns
from timeline_app.models import Compaction, Conversation, Tenant
from timeline_app.services.compaction import COMPACT_TASK
from timeline_app.services.compaction import run as compaction_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_worker(monkeypatch, settings) -> list[tuple[Any, ...]]:
    """Eager tasks off, the broker recorded, and a summarizer that fails the test if called."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[tuple[Any, ...]] = []
    task = current_app.tasks[COMPACT_TASK]

    def record(args: tuple[Any, ...], **kwargs: Any) -> Any:
        sent.append(args)
        return type("Result", (), {"id": kwargs.get("task_id")})()

    def summarizer_called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the summarizer ran inside the admin's request")

    monkeypatch.setattr(task, "apply_async", record)
    monkeypatch.setattr(compaction_service, "configured_summarizer", summarizer_called)
    monkeypatch.setattr(compaction_service, "draft_summary", summarizer_called)
    return sent


def _conversations(tenant: Tenant, count: int) -> list[Conversation]:
    made = []
    for number in range(count):
        conversation = ConversationFactory(tenant=tenant, public_id=f"{tenant.name}-c{number}")
        add_turns(TimelineFactory(conversation=conversation), 3)
        made.append(conversation)
    return made


def _queued(conversations: list[Conversation]) -> list[Compaction]:
    return list(
        Compaction.objects.filter(timeline__conversation__in=conversations).select_related(
            "timeline__conversation"
        )
    )


def _texts(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_the_bulk_action_queues_one_compaction_per_conversation_and_runs_none(operator, no_worker):
    conversations = _conversations(TenantFactory(name="acme"), 3)
    response = operator.post(
        urls.changelist("conversation"),
        {"action": "compact_selected", "_selected_action": [c.pk for c in conversations]},
    )
    assert response.status_code == 302
    rows = _queued(conversations)
    assert sorted(r.timeline.conversation.public_id for r in rows) == [c.public_id for c in conversations]
    assert {(r.status, r.trigger, r.timeline.name) for r in rows} == {("queued", "manual", "main")}
    assert sorted(args[3] for args in no_worker) == sorted(r.pk for r in rows)  # each row's own task
    texts = _texts(response)
    for row in rows:
        assert any(row.public_id in text and "queued" in text for text in texts), texts


def test_the_button_queues_a_compaction_and_says_queued(operator, no_worker):
    conversations = _conversations(TenantFactory(name="acme"), 2)
    for conversation in conversations:
        response = operator.post(urls.compact(conversation.pk), {"context": "main"})
        assert response.status_code == 302
        (row,) = _queued([conversation])
        assert row.status == "queued" and row.trigger == "manual"
        text = _texts(response)[-1]  # the messages of earlier requests were not shown yet
        assert f"{row.public_id}</a> of “main”: queued." in text
        assert urls.change("compaction", row.pk) in text
    assert len(no_worker) == 2
    # Asked again while queued: the answer names the same compaction, nothing more is queued.
    response = operator.post(urls.compact(conversations[0].pk), {"context": "main"})
    assert len(_queued(conversations)) == 2 and len(no_worker) == 2
    assert _queued([conversations[0]])[0].public_id in _texts(response)[-1]


def test_a_tenant_scoped_operator_cannot_compact_another_tenants_conversation(
    operator, operator_user, no_worker
):
    acme, globex = TenantFactory(name="acme"), TenantFactory(name="globex")
    acme.staff_users.add(operator_user)
    (mine,) = _conversations(acme, 1)
    (theirs,) = _conversations(globex, 1)
    response = operator.post(
        urls.changelist("conversation"),
        {"action": "compact_selected", "_selected_action": [mine.pk, theirs.pk]},
    )
    assert response.status_code == 302
    assert [r.timeline.conversation for r in _queued([mine, theirs])] == [mine]
    response = operator.post(urls.compact(theirs.pk), {"context": "main"})
    assert response.status_code in {302, 404}
    assert not _queued([theirs])
    assert len(no_worker) == 1
