"""``DELETE /api/v1/conversations/{conv}/``: the tenant's right to erase, and the retention job."""

import base64
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from tests.factories import add_turns
from timeline_app.models import Conversation
from timeline_app.tasks import expire_idle_conversations

pytestmark = pytest.mark.django_db
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


def row_counts() -> dict[str, int]:
    """Rows of every table of the app, by model."""
    return {
        model.__name__: model.objects.count() for model in apps.get_app_config("timeline_app").get_models()
    }


def fill(caller, conv: str) -> None:
    """A conversation that owns one of everything: turns with a binary attachment, tool rounds,
    a hidden block, a compaction with its summary, sources, a named context of messages, renders."""
    base = f"/api/v1/conversations/{conv}"
    assert caller.post("/api/v1/conversations/", {"id": conv}).status_code == 201
    timeline = Conversation.objects.get(tenant=caller.tenant, public_id=conv).timelines.get()
    add_turns(timeline, 6)
    attachment = {"name": "map.png", "mime": "image/png", "base64": PNG}
    assert (
        caller.post(f"{base}/turns/", {"prompt": "and this", "attachments": [attachment]}).status_code == 201
    )
    hide = {"path": "tc:turn_1.tc_1x0.result", "replacement_text": "[hidden]"}
    assert caller.post(f"{base}/hide/", hide).status_code == 200
    assert caller.post(f"{base}/sources/", {"sources": [{"url": "https://example.org"}]}).status_code == 200
    assert caller.post(f"{base}/render/", {}).status_code == 200
    assert caller.post(f"{base}/compact/", {"force": True, "wait": True}).json()["status"] == "applied"
    assert caller.post(f"{base}/render/", {}).status_code == 200
    messages = {"messages": [{"role": "user", "content": "hello"}]}
    assert caller.post(f"{base}/contexts/attempt_a/messages/", messages).status_code == 201


def test_erasing_a_conversation_leaves_no_row_of_it_in_any_table(owner, make_caller):
    other = make_caller("globex")
    fill(owner, "keep")  # the same tenant's other conversation stays
    fill(other, "doomed")  # another tenant's conversation of the same id stays
    before = row_counts()
    fill(owner, "doomed")
    assert all(
        row_counts()[name] > count for name, count in before.items() if name in ("Block", "Compaction")
    )
    response = owner.delete("/api/v1/conversations/doomed/")
    assert response.status_code == 204
    assert row_counts() == before, "every row of the erased conversation, and only those, is gone"
    assert owner.get("/api/v1/conversations/doomed/").status_code == 404
    assert other.get("/api/v1/conversations/doomed/").status_code == 200
    assert owner.get("/api/v1/conversations/keep/").json()["block_count"] > 0


def test_another_tenant_cannot_erase_a_conversation(owner, make_caller, conversation):
    stranger = make_caller("globex")
    before = row_counts()
    response = stranger.delete("/api/v1/conversations/c1/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert row_counts() == before
    assert make_caller("acme").delete("/api/v1/conversations/c1/").status_code == 204


def test_the_retention_job_erases_idle_conversations_in_bounded_batches(owner, settings):
    for conv in ("old1", "old2", "old3", "fresh"):
        owner.post("/api/v1/conversations/", {"id": conv})
    Conversation.objects.exclude(public_id="fresh").update(
        last_activity_at=timezone.now() - timedelta(days=40)
    )
    settings.TIMELINE_RETENTION_IDLE_DAYS = 0
    assert expire_idle_conversations() == 0, "off by default"
    settings.TIMELINE_RETENTION_IDLE_DAYS = 30
    settings.TIMELINE_RETENTION_BATCH = 2
    assert expire_idle_conversations() == 2
    assert expire_idle_conversations() == 1
    assert expire_idle_conversations() == 0
    assert list(Conversation.objects.values_list("public_id", flat=True)) == ["fresh"]
