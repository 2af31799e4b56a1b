"""Issue 20.4: the export (``GET …/timeline/``) streams. Its bytes are those of the whole payload
built in memory and serialized at once, it is one consistent snapshot, and import takes it."""

from __future__ import annotations

import base64
import threading
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.db import connection, connections

from tests.factories import add_turns
from timeline_app import selectors
from timeline_app.api.exports import TimelineExportOut, export_chunks
from timeline_app.api.renderers import StableJSONRenderer
from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.times import iso_utc
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_app.services.export import timeline_export

C = "/api/v1/conversations"
NOW = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


def whole_body(timeline: Timeline, window: str = "all") -> bytes:
    """What the view answered before it streamed: the whole payload in memory
    (``timeline_export``, the admin's download) through its serializer and the renderer."""
    return StableJSONRenderer().render(
        TimelineExportOut(timeline_export(timeline=timeline, window=window)).data
    )


def realistic(owner: Any, conversation: Any) -> Timeline:
    """Hidden blocks, compactions, sources, a binary, a named context with messages, meta."""
    conversation.settings = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}
    conversation.save()
    timeline = Timeline.objects.get(conversation=conversation)
    add_turns(timeline, 8)
    owner.post(
        f"{C}/c1/sources/", {"sources": [{"url": "https://a.example", "title": "Ä", "text": "alpha\u2028"}]}
    )
    owner.post(f"{C}/c1/hide/", {"path": "tc:turn_8.tc_8x0.result", "replacement_text": "[hidden by agent]"})
    attachment = {
        "name": "x.png",
        "mime": "image/png",
        "base64": base64.b64encode(bytes(range(256))).decode(),
    }
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_bin", "prompt": "see ✓", "attachments": [attachment]})
    meta = {"z": [1, 2.5, None, True], "a": {"ü": "\u2029", "n": -3}}
    owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "react.notes", "text": "n", "meta": meta}]})
    assert owner.post(f"{C}/c1/render/", {}).status_code == 200
    add_turns(timeline, 3)
    assert owner.post(f"{C}/c1/compact/", {"force": True, "wait": True}).status_code == 200
    assert Compaction.objects.filter(timeline=timeline, status="applied").count() >= 2
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert owner.post(f"{C}/c1/contexts/attempt/messages/", {"messages": messages}).status_code == 201
    assert Block.objects.filter(timeline=timeline, hidden=True).exists()
    assert Block.objects.filter(timeline=timeline, data__isnull=False).exists()
    return timeline


@pytest.mark.django_db
@pytest.mark.parametrize("window", ["all", "visible"])
def test_the_streamed_export_is_byte_identical_to_the_whole_payload(owner, conversation, window):
    timeline = realistic(owner, conversation)
    with time_machine.travel(NOW, tick=False):
        for context in (timeline, Timeline.objects.get(conversation=conversation, name="attempt")):
            response = owner.get(f"{C}/c1/contexts/{context.name}/timeline/", window=window)
            assert response.status_code == 200 and response.streamed
            assert response["Content-Type"] == "application/json"
            assert response.content == whole_body(context, window)
    assert response.json()["ts"] == iso_utc(NOW)


@pytest.mark.django_db
def test_the_streamed_export_imports_as_the_same_conversation(owner, conversation):
    realistic(owner, conversation)
    exported = owner.get(f"{C}/c1/timeline/").json()
    assert owner.post(f"{C}/import/", {**exported, "id": "copy"}).status_code == 201
    again = owner.get(f"{C}/copy/timeline/").json()
    for body in (exported, again):
        body.pop("ts"), body.pop("conversation_id")
    # The operations log travels under new ids, followed by the import's own entry.
    logged, relogged = exported.pop("operations"), again.pop("operations")
    assert [{**e, "id": ""} for e in relogged[:-1]] == [{**e, "id": ""} for e in logged]
    assert relogged[-1]["kind"] == "imported"
    assert again == exported


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's snapshot isolation")
def test_an_export_is_a_snapshot_of_the_moment_it_started(owner, conversation):
    timeline = Timeline.objects.get(conversation=conversation)
    add_turns(timeline, 3)
    with time_machine.travel(NOW, tick=False):
        before = whole_body(timeline)
        chunks = export_chunks(timeline=timeline, window="all")
        first = next(chunks)  # the head is read, the blocks not yet

        def meanwhile() -> None:  # another worker, on its own connection
            blocks_append(timeline=timeline, blocks=[NewBlock(type="react.notes", text="late")])
            Block.objects.filter(timeline=timeline, seq=1).update(hidden=True, replacement_text="[gone]")
            connections.close_all()

        writer = threading.Thread(target=meanwhile)
        writer.start()
        writer.join()
        body = first + b"".join(chunks)
    assert body == before
    assert Block.objects.filter(timeline=timeline, text="late").exists()
    assert selectors.visible_window(timeline=timeline)  # the writes are there for the next export
