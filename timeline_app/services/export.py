"""``conv.timeline.v1`` export and import (seed 003 "Stored payload").

The export holds every stored block (hidden and compacted ones too), the sources pool, the
conversation's title, start and settings, and the compaction records that say which summary covers
what — so an import rebuilds the same visible window. ``window="visible"`` exports only the
post-summary window, the seed's persistence rule.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.block_rules import block_problems, default_author
from timeline_app.domain.message_validation import message_block_problems
from timeline_app.domain.operations import IMPORTED, SYSTEM
from timeline_app.domain.thinking import thinking_block_problems
from timeline_app.domain.times import iso_utc, parse_iso
from timeline_app.errors import InvalidInput
from timeline_app.models import Block, Compaction, Conversation, Operation, Source, Tenant, Timeline
from timeline_app.rendering.ttl import stored_costs
from timeline_app.services.conversations import conversation_create
from timeline_app.services.operations import operation_record

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


EXPORT_CHUNK = 500
"""Blocks fetched per round trip of the export's server-side cursor: the export holds this many
rows at a time, however long the conversation."""


def _export_parts(timeline: Timeline, window: str) -> tuple[dict[str, Any], Iterable[Block]]:
    """Every part of the payload but ``blocks`` and ``turn_ids``, and the block rows in order (read
    lazily, ``EXPORT_CHUNK`` at a time, for the whole timeline; the visible window is read whole)."""
    conversation = timeline.conversation
    rows = Block.objects.filter(timeline=timeline).order_by("seq")
    compactions = list(
        Compaction.objects.filter(timeline=timeline, status=Compaction.Status.APPLIED)
        .select_related("summary_block")
        .order_by("id")
    )
    ordered: Iterable[Block]
    if window == "visible":
        # In rendered order: the latest summary first, then the retained blocks.
        order = [blk.seq for blk in selectors.visible_window(timeline=timeline)]
        by_seq = {row.seq: row for row in rows.filter(seq__in=order)}
        ordered = [by_seq[seq] for seq in order]
        compactions = compactions[-1:]
    else:
        ordered = rows.iterator(chunk_size=EXPORT_CHUNK)
    head = {
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
        "sources_pool": [
            {"sid": s.sid, "url": s.url, "title": s.title, "text": s.text, "meta": s.meta}
            for s in selectors.sources_pool(timeline=timeline)
        ],
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
        "operations": [
            operation_payload(row) for row in Operation.objects.filter(timeline=timeline).order_by("id")
        ],
    }
    return head, ordered


def operation_payload(row: Operation) -> dict[str, Any]:
    """An operations log entry as the API answers it and the export carries it."""
    return {
        "id": row.public_id,
        "at": iso_utc(row.at),
        "kind": row.kind,
        "actor": row.actor,
        "tokens_before": row.tokens_before,
        "tokens_after": row.tokens_after,
        "seq_ranges": row.seq_ranges,
        "paths": row.paths,
        "compaction_id": row.compaction_id,
        "model": row.model,
        "cost_usd": None if row.cost_usd is None else str(row.cost_usd),
        "details": row.details,
    }


@dataclass
class ExportStream:
    """An export being read: ``head`` holds every part but the blocks and the turn ids; ``blocks()``
    yields the blocks one by one, and ``turn_ids`` is complete once they have all been read."""

    head: dict[str, Any]
    rows: Iterable[Block]
    turn_ids: list[str] = field(default_factory=list)

    def blocks(self) -> Iterator[dict[str, Any]]:
        seen: set[str] = set()
        for row in self.rows:
            if row.turn_id and row.turn_id not in seen:
                seen.add(row.turn_id)
                self.turn_ids.append(row.turn_id)
            yield _block_payload(row)


@contextlib.contextmanager
def timeline_export_stream(*, timeline: Timeline, window: str = "all") -> Iterator[ExportStream]:
    """The export of ``timeline`` as one consistent snapshot, to be read inside the ``with``.

    On PostgreSQL everything is read in one ``REPEATABLE READ, READ ONLY`` transaction (unless the
    caller is inside one already): blocks appended, hidden or compacted while a long export is being
    written are not in it, and the head (compactions, sources, view start) matches its blocks. The
    blocks come through a server-side cursor, so memory does not grow with the conversation.
    """
    outer = connection.in_atomic_block
    with transaction.atomic():
        if not outer and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        timeline = Timeline.objects.select_related("conversation").get(pk=timeline.pk)
        head, rows = _export_parts(timeline, window)
        yield ExportStream(head=head, rows=rows)


def timeline_export(*, timeline: Timeline, window: str = "all") -> dict[str, Any]:
    """The whole ``conv.timeline.v1`` payload in memory (the admin's download). The API streams the
    same payload (``timeline_export_stream``), byte for byte."""
    with timeline_export_stream(timeline=timeline, window=window) as export:
        blocks = list(export.blocks())
        return {**export.head, "blocks": blocks, "turn_ids": export.turn_ids}


MAX_IMPORT_SEQ = b.SEQ_LIMIT
"""Imported seqs stay below this, like every seq the service writes: the timeline's ``next_seq``
(one past the last seq) must fit its bigint column, so any stored timeline's export imports again.
(Seqs past 2^53 need a JSON reader with exact integers, as Python's; JavaScript's rounds them.)"""
MAX_IMPORT_SID = 2**30
"""Imported sids stay below this (the column holds < 2^31): room for new sources after the import."""
IMPORT_BATCH = 1000


def _import_problems(payload: dict[str, Any]) -> dict[str, Any]:
    """Everything an import could fail on, checked before its first write: seq, id, sid and url
    uniqueness and bounds, message blocks, and the compactions' seqs. Empty when it can be stored."""
    problems: dict[str, Any] = {}
    seqs: set[int] = set()
    client_ids: set[str] = set()
    summaries: set[int] = set()
    for i, item in enumerate(payload["blocks"]):
        seq = item["seq"]
        if seq >= MAX_IMPORT_SEQ:
            problems[f"blocks[{i}].seq"] = f"must be below {MAX_IMPORT_SEQ}"
        if seq in seqs:
            problems[f"blocks[{i}].seq"] = f"duplicate seq {seq}"
        seqs.add(seq)
        if item.get("id"):
            if item["id"] in client_ids:
                problems[f"blocks[{i}].id"] = f"duplicate block id {item['id']!r}"
            client_ids.add(item["id"])
        if item["type"] == b.SUMMARY:
            summaries.add(seq)
        problems.update(message_block_problems(item["type"], item["meta"], where=f"blocks[{i}].meta"))
        problems.update(
            block_problems(
                type=item["type"],
                author=default_author(item["type"], item["author"]),
                meta=item["meta"],
                path=item["path"],
                where=f"blocks[{i}]",
            )
        )
        problems.update(
            thinking_block_problems(
                type=item["type"],
                author=item["author"],
                text=item["text"],
                meta=item["meta"],
                has_data=bool(item["base64"]),
                where=f"blocks[{i}].meta",
            )
        )
    next_seq = max(seqs, default=0) + 1
    view_start = payload.get("view_start_seq") or 0
    if view_start > next_seq:
        problems["view_start_seq"] = f"must be at most {next_seq} (one past the last seq)"
    summary_seqs: set[int] = set()
    for i, item in enumerate(payload.get("compactions", [])):
        where = f"compactions[{i}]"
        if item["summary_seq"] not in summaries:
            problems[f"{where}.summary_seq"] = "names no conv.range.summary block"
        elif item["summary_seq"] in summary_seqs:
            problems[f"{where}.summary_seq"] = "another compaction names the same summary"
        summary_seqs.add(item["summary_seq"])
        for name in ("first_retained_seq", "covered_from_seq", "covered_to_seq"):
            value = item.get(name)
            if value is not None and not 0 <= value <= next_seq:
                problems[f"{where}.{name}"] = f"must be between 0 and {next_seq} (one past the last seq)"
    sids: set[int] = set()
    urls: set[str] = set()
    for i, source in enumerate(payload.get("sources_pool", [])):
        if source["sid"] >= MAX_IMPORT_SID:
            problems[f"sources_pool[{i}].sid"] = f"must be below {MAX_IMPORT_SID}"
        elif source["sid"] in sids:
            problems[f"sources_pool[{i}].sid"] = f"duplicate sid {source['sid']}"
        if source["url"] in urls:
            problems[f"sources_pool[{i}].url"] = "duplicate url"
        sids.add(source["sid"])
        urls.add(source["url"])
    return problems


def _block_row(timeline: Timeline, item: dict[str, Any]) -> Block:
    row = Block(
        timeline=timeline,
        seq=item["seq"],
        client_id=item.get("id") or None,
        type=item["type"],
        author=default_author(item["type"], item["author"]),
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
    row.tokens, row.replacement_tokens = stored_costs(row.to_value())
    return row


@transaction.atomic(savepoint=False)
def timeline_import(*, tenant: Tenant, payload: dict[str, Any], public_id: str | None = None) -> Conversation:
    """Create a new conversation from a validated ``conv.timeline.v1`` payload.

    Everything is checked before the first write (nothing is stored for a payload that fails);
    blocks are then written in batches, so memory beyond the payload itself stays bounded.
    """
    problems = _import_problems(payload)
    if problems:
        raise InvalidInput("the timeline cannot be imported", details=problems)
    started_at = payload.get("conversation_started_at")
    conversation = conversation_create(
        tenant=tenant,
        public_id=public_id,
        title=payload.get("conversation_title", ""),
        settings=payload.get("settings") or {},
        started_at=parse_iso(started_at) if started_at else None,
        log_created=False,
    )
    timeline = Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)
    wanted = {item["summary_seq"] for item in payload.get("compactions", [])}
    summaries: dict[int, Block] = {}
    blocks = payload["blocks"]
    for start in range(0, len(blocks), IMPORT_BATCH):
        batch = [_block_row(timeline, item) for item in blocks[start : start + IMPORT_BATCH]]
        Block.objects.bulk_create(batch)
        summaries.update((row.seq, row) for row in batch if row.seq in wanted)
    now = timezone.now()
    Compaction.objects.bulk_create(
        [
            Compaction(
                timeline=timeline,
                summary_block=summaries[item["summary_seq"]],
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
            for item in payload.get("compactions", [])
        ]
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
        next_seq=max((item["seq"] for item in blocks), default=0) + 1,
        view_start_seq=payload.get("view_start_seq") or 0,
        compaction_strategy=payload.get("compaction_strategy") or {},
    )
    # The exported log as it was (the newest that fit beside the import's own entry), then the import.
    exported = payload.get("operations", [])
    history = exported[max(0, len(exported) - (settings.TIMELINE_OPERATIONS_LOG_MAX - 1)) :]
    Operation.objects.bulk_create([_operation_row(timeline, item) for item in history])
    seqs = [item["seq"] for item in blocks]
    operation_record(
        timeline=timeline,
        kind=IMPORTED,
        ranges=[(min(seqs), max(seqs))] if seqs else (),
        details={"from_conversation": payload.get("conversation_id") or "", "blocks": len(blocks)},
    )
    return conversation


def _operation_row(timeline: Timeline, item: dict[str, Any]) -> Operation:
    return Operation(
        timeline=timeline,
        at=parse_iso(item["at"]),
        kind=item["kind"],
        actor=item.get("actor") or SYSTEM,
        tokens_before=item.get("tokens_before"),
        tokens_after=item.get("tokens_after"),
        seq_ranges=item.get("seq_ranges") or [],
        paths=item.get("paths") or [],
        compaction_id=item.get("compaction_id") or "",
        model=item.get("model") or "",
        cost_usd=item.get("cost_usd"),
        details=item.get("details") or {},
    )
