"""``conv.timeline.v1`` export and import (seed 003 "Stored payload").

The export holds every stored block (hidden and compacted ones too), the sources pool, the
conversation's title, start and settings, and the compaction records that say which summary covers
what — so an import rebuilds the same visible window. ``window="visible"`` exports only the
post-summary window, the seed's persistence rule.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from timeline_app import selectors
from timeline_app.errors import InvalidInput
from timeline_app.models import Block, Compaction, Conversation, Source, Tenant, Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.costs import block_tokens, hidden_tokens
from timeline_app.rendering.times import iso_utc
from timeline_app.services.conversations import conversation_create

VERSION = 1
KIND = "conv.timeline.v1"


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


def timeline_export(*, timeline: Timeline, window: str = "all") -> dict[str, Any]:
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


@transaction.atomic(durable=True)
def timeline_import(*, tenant: Tenant, payload: dict[str, Any], public_id: str | None = None) -> Conversation:
    """Create a new conversation from a validated ``conv.timeline.v1`` payload."""
    started_at = payload.get("conversation_started_at")
    conversation = conversation_create(
        tenant=tenant,
        public_id=public_id,
        title=payload.get("conversation_title", ""),
        settings=payload.get("settings") or {},
        started_at=datetime.fromisoformat(started_at.replace("Z", "+00:00")) if started_at else None,
    )
    timeline = Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)
    rows: list[Block] = []
    seqs: set[int] = set()
    client_ids: set[str] = set()
    for item in payload["blocks"]:
        seq = item["seq"]
        if seq in seqs:
            raise InvalidInput("duplicate seq in blocks", details={"seq": seq})
        seqs.add(seq)
        if item.get("id"):
            if item["id"] in client_ids:
                raise InvalidInput("duplicate block id", details={"id": item["id"]})
            client_ids.add(item["id"])
        row = Block(
            timeline=timeline,
            seq=seq,
            client_id=item.get("id") or None,
            type=item["type"],
            author=item["author"],
            turn_id=item["turn_id"],
            ts=item["ts"],
            mime=item["mime"],
            text=item["text"],
            data=item["base64"] or None,
            path=item["path"],
            meta=item["meta"],
            hidden=item["hidden"],
            replacement_text=item["replacement_text"],
            hidden_reason=item["hidden_reason"],
        )
        value = row.to_value()
        row.tokens = block_tokens(value)
        row.replacement_tokens = hidden_tokens(value, row.replacement_text) if row.hidden else 0
        rows.append(row)
    Block.objects.bulk_create(rows, batch_size=1000)
    by_seq = {row.seq: row for row in rows}
    now = timezone.now()
    for item in payload.get("compactions", []):
        summary = by_seq.get(item["summary_seq"])
        if summary is None or summary.type != b.SUMMARY:
            raise InvalidInput("a compaction names a summary_seq that is no summary block", details=item)
        Compaction.objects.create(
            timeline=timeline,
            summary_block=summary,
            trigger=item.get("trigger") or Compaction.Trigger.MANUAL,
            status=Compaction.Status.APPLIED,
            first_retained_seq=item["first_retained_seq"],
            covered_from_seq=item.get("covered_from_seq"),
            covered_to_seq=item.get("covered_to_seq"),
            covered_turn_ids=item.get("covered_turn_ids") or [],
            split_turn_id=item.get("split_turn_id") or "",
            before_tokens=item.get("before_tokens") or 0,
            after_tokens=item.get("after_tokens") or 0,
            compacted_tokens=item.get("compacted_tokens") or 0,
            summarizer=item.get("summarizer") or "",
            model=item.get("model") or "",
            started_at=now,
            finished_at=now,
        )
    Source.objects.bulk_create(
        [
            Source(
                timeline=timeline,
                sid=s["sid"],
                url=s["url"],
                title=s.get("title") or "",
                text=s.get("text") or "",
                meta=s.get("meta") or {},
            )
            for s in payload.get("sources_pool", [])
        ]
    )
    Timeline.objects.filter(pk=timeline.pk).update(
        next_seq=max(seqs, default=0) + 1,
        view_start_seq=payload.get("view_start_seq") or 0,
        compaction_strategy=payload.get("compaction_strategy") or {},
    )
    return conversation
