"""Issue 20.4: the export (``GET …/timeline/``) streams. Its bytes are those the builder gave before
streaming (kept here verbatim as the reference), it is one consistent snapshot, and import takes it."""

from __future__ import annotations

import base64
import threading
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.db import connection, connections
from django.utils import timezone

from tests.factories import add_turns
from timeline_app import selectors
from timeline_app.api.exports import TimelineExportOut, export_chunks
from timeline_app.api.renderers import StableJSONRenderer
from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.times import iso_utc
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_app.services.export import KIND, VERSION

C = "/api/v1/conversations"
NOW = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


# ---- the builder as it was before the export streamed (timeline_app/services/export.py) ----


def _block_payload(row: Block) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "id": row.client_id,
        "type": row.type,
        "author": row.author,
        "turn_id": row.turn_id,
        "ts": row.ts,
        "mime": row.mime,
        "text": row.text,
        "base64": base64.b64encode(bytes(row.data)).decode() if row.data else "",
        "path": row.path,
        "meta": row.meta,
        "hidden": row.hidden,
        "replacement_text": row.replacement_text,
        "hidden_reason": row.hidden_reason,
    }


def legacy_export(*, timeline: Timeline, window: str = "all") -> dict[str, Any]:
    conversation = timeline.conversation
    rows = Block.objects.filter(timeline=timeline).order_by("seq")
    compactions = list(
        Compaction.objects.filter(timeline=timeline, status=Compaction.Status.APPLIED)
        .select_related("summary_block")
        .order_by("id")
    )
    if window == "visible":
        # In rendered order: the latest summary first, then the retained blocks.
        order = [blk.seq for blk in selectors.visible_window(timeline=timeline)]
        by_seq = {row.seq: row for row in rows.filter(seq__in=order)}
        blocks = [_block_payload(by_seq[seq]) for seq in order]
        compactions = compactions[-1:]
    else:
        blocks = [_block_payload(row) for row in rows.iterator(chunk_size=2000)]
    turn_ids = list(dict.fromkeys(blk["turn_id"] for blk in blocks if blk["turn_id"]))
    return {
        "kind": KIND,
        "version": VERSION,
        "ts": iso_utc(timezone.now()),
        "conversation_id": conversation.public_id,
        "conversation_title": conversation.title,
        "conversation_started_at": conversation.started_at.isoformat().replace("+00:00", "Z"),
        "context": timeline.name,
        "settings": conversation.settings,
        "view_start_seq": timeline.view_start_seq,
        "compaction_strategy": timeline.compaction_strategy,
        "blocks": blocks,
        "sources_pool": [
            {"sid": s.sid, "url": s.url, "title": s.title, "text": s.text, "meta": s.meta}
            for s in selectors.sources_pool(timeline=timeline)
        ],
        "turn_ids": turn_ids,
        "compactions": [
            {
                "summary_seq": c.summary_block.seq if c.summary_block else None,
                "first_retained_seq": c.first_retained_seq,
                "covered_from_seq": c.covered_from_seq,
                "covered_to_seq": c.covered_to_seq,
                "covered_turn_ids": c.covered_turn_ids,
                "split_turn_id": c.split_turn_id,
                "trigger": c.trigger,
                "before_tokens": c.before_tokens,
                "after_tokens": c.after_tokens,
                "compacted_tokens": c.compacted_tokens,
                "summarizer": c.summarizer,
                "model": c.model,
            }
            for c in compactions
            if c.summary_block is not None
        ],
    }


def legacy_body(timeline: Timeline, window: str = "all") -> bytes:
    """What the view answered before: the whole payload through its serializer and the renderer."""
    timeline = Timeline.objects.select_related("conversation").get(pk=timeline.pk)
    return StableJSONRenderer().render(
        TimelineExportOut(legacy_export(timeline=timeline, window=window)).data
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
            assert response.content == legacy_body(context, window)
    assert response.json()["ts"] == iso_utc(NOW)


@pytest.mark.django_db
def test_the_streamed_export_imports_as_the_same_conversation(owner, conversation):
    realistic(owner, conversation)
    exported = owner.get(f"{C}/c1/timeline/").json()
    assert owner.post(f"{C}/import/", {**exported, "id": "copy"}).status_code == 201
    again = owner.get(f"{C}/copy/timeline/").json()
    for body in (exported, again):
        body.pop("ts"), body.pop("conversation_id")
    assert again == exported


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's snapshot isolation")
def test_an_export_is_a_snapshot_of_the_moment_it_started(owner, conversation):
    timeline = Timeline.objects.get(conversation=conversation)
    add_turns(timeline, 3)
    with time_machine.travel(NOW, tick=False):
        before = legacy_body(timeline)
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
