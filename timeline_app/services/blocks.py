"""Writes of blocks: contribute (append, idempotent by client id) and start a turn."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.block_rules import checked_blocks
from timeline_app.domain.contributions import NewAttachment, NewBlock, default_path, replay_differences
from timeline_app.domain.meta import MetaLimits
from timeline_app.domain.times import iso_utc
from timeline_app.errors import Conflict, InvalidInput
from timeline_app.models import Block, Timeline
from timeline_app.rendering.ttl import stored_costs
from timeline_app.services.conversations import timeline_lock_for_append

ReplayCheck = Callable[[Block, NewBlock], dict[str, str]]
"""``(stored, sent)`` of one client id → what differs (``details`` of a 409); empty when the same."""


def block_replay_check(stored: Block, sent: NewBlock) -> dict[str, str]:
    """A block id stored already with another body is a conflict: the fields the client sent
    that differ (``domain.contributions.replay_differences``), keyed by the id."""
    as_stored = NewBlock(
        type=stored.type,
        author=stored.author,
        turn_id=stored.turn_id,
        ts=stored.ts,
        mime=stored.mime,
        text=stored.text,
        data=bytes(stored.data or b""),
        path=stored.path,
        meta=stored.meta,
        client_id=stored.client_id,
    )
    differing = replay_differences(stored=as_stored, sent=sent)
    if not differing:
        return {}
    return {str(sent.client_id): f"stored already with a different {', '.join(differing)}"}


@dataclass(frozen=True)
class Appended:
    """What a write of blocks answers: every block of the request in order (replays as stored), and
    how many of them it created (0: a pure replay, which the API answers 200 instead of 201)."""

    rows: list[Block]
    created: int


def meta_limits() -> MetaLimits:
    """The configured caps on a stored ``meta`` (``TIMELINE_MAX_META_*``, read at call time)."""
    return MetaLimits(
        max_bytes=settings.TIMELINE_MAX_META_BYTES,
        max_keys=settings.TIMELINE_MAX_META_KEYS,
        max_depth=settings.TIMELINE_MAX_META_DEPTH,
    )


def blocks_append(
    *, timeline: Timeline, blocks: Sequence[NewBlock], replay_check: ReplayCheck = block_replay_check
) -> list[Block]:
    """Append blocks in order; a block whose client id is already stored comes back as stored."""
    return blocks_store(timeline=timeline, blocks=blocks, replay_check=replay_check).rows


def blocks_store(
    *,
    timeline: Timeline,
    blocks: Sequence[NewBlock],
    replay_check: ReplayCheck = block_replay_check,
    replays_check: Callable[[dict[str | None, Block]], None] | None = None,
) -> Appended:
    """Append blocks in order; a block whose client id is already stored comes back as stored.

    Sequence numbers are allocated under a row lock on the timeline (taken after the
    conversation's, ``timeline_lock``), so concurrent writers never collide; earlier rows are never
    touched (append is O(1) in the timeline's length). A stored block of the same client id that
    differs (``replay_check``: by default the fields the client sent, ``block_replay_check``) is a
    conflict (409) and nothing is stored: decided under the lock, so of concurrent writers of one
    id with different content exactly one wins.

    Every block is checked first (``domain.block_rules.checked_blocks``: a well-known type
    without an author gets its default one; any other lack is a 400 naming the field, nothing
    stored).
    """
    blocks = checked_blocks(blocks)
    ids = [nb.client_id for nb in blocks if nb.client_id]
    prepared = _rows(timeline, blocks)

    with transaction.atomic(savepoint=False):
        # The conversation is active (a replay included), its row locked, then the context's.
        locked_pk, next_seq = timeline_lock_for_append(timeline=timeline, now=timezone.now())
        existing = (
            {blk.client_id: blk for blk in Block.objects.filter(timeline_id=locked_pk, client_id__in=ids)}
            if ids
            else {}
        )
        if replays_check is not None:  # the request as a whole against what it replays
            replays_check(existing)
        conflicts: dict[str, str] = {}
        for nb in blocks:
            if nb.client_id in existing:
                conflicts.update(replay_check(existing[nb.client_id], nb))
        if conflicts:
            raise Conflict("a block id is stored already with different content", details=conflicts)
        fresh = [row for row in prepared if row.client_id not in existing]
        # Replays (same client id) come back as stored: only new blocks are tokenized, here under
        # the lock, where the stored ones are known (a read of the ids before it, to tokenize
        # outside the lock, was a statement more per append: issue 38).
        for row in fresh:
            row.tokens, row.replacement_tokens = stored_costs(row.to_value())
        if fresh and next_seq + len(fresh) > b.SEQ_LIMIT:
            raise Conflict(
                "the context is full: no seq left for these blocks",
                details={"next_seq": next_seq, "blocks": len(fresh)},
            )
        for offset, row in enumerate(fresh):
            row.timeline_id = locked_pk
            row.tenant_id = timeline.tenant_id
            row.conversation_id = timeline.conversation_id
            row.seq = next_seq + offset
        if fresh:
            Block.objects.bulk_create(fresh)
            Timeline.objects.filter(pk=locked_pk).update(
                next_seq=F("next_seq") + len(fresh), version=F("version") + 1
            )
    rows = [existing.get(row.client_id, row) if row.client_id else row for row in prepared]
    return Appended(rows=rows, created=len(fresh))


def _rows(timeline: Timeline, blocks: Sequence[NewBlock]) -> list[Block]:
    """The checked blocks as unsaved rows: a block without a turn id joins the current turn (a
    turn header starts one), a well-known type without a path gets its seed path."""
    # Blocks without a turn_id join the current turn: look it up only when one needs it.
    needs_turn = any(nb.turn_id is None for nb in blocks)
    current_turn = selectors.timeline_current_turn_id(timeline=timeline) if needs_turn else ""
    now_iso = iso_utc(timezone.now())
    prepared: list[Block] = []
    for nb in blocks:
        turn_id = nb.turn_id if nb.turn_id is not None else current_turn
        if nb.type == b.TURN_HEADER:
            current_turn = turn_id
        path = nb.path or default_path(type=nb.type, turn_id=turn_id, meta=nb.meta)
        row = Block(
            turn_id=turn_id,
            type=nb.type,
            author=nb.author,
            ts=nb.ts or now_iso,
            mime=nb.mime,
            text=nb.text,
            data=nb.data or None,
            path=path,
            meta=nb.meta,
            client_id=nb.client_id,
        )
        prepared.append(row)
    return prepared


def new_turn_id(now: datetime | None = None) -> str:
    """``turn_<epoch ms>_<6 chars>``, the form the seeds show."""
    moment = now or timezone.now()
    return f"turn_{int(moment.timestamp() * 1000)}_{secrets.token_hex(3)}"


def turn_start(
    *,
    timeline: Timeline,
    prompt: str,
    turn_id: str | None = None,
    attachments: Sequence[NewAttachment] = (),
    ts: str | None = None,
) -> list[Block]:
    """Write a turn's header, ``user.prompt`` and attachment blocks with their seed paths."""
    return turn_store(timeline=timeline, prompt=prompt, turn_id=turn_id, attachments=attachments, ts=ts).rows


def turn_store(
    *,
    timeline: Timeline,
    prompt: str,
    turn_id: str | None = None,
    attachments: Sequence[NewAttachment] = (),
    ts: str | None = None,
) -> Appended:
    """Write a turn's header, ``user.prompt`` and attachment blocks with their seed paths.

    Starting the same ``turn_id`` again returns the stored blocks (``created`` 0): the client ids
    derive from it. Started again with another prompt, ``ts`` or attachments, it is a conflict
    (409) and nothing is stored (``turn_replay_check``, under the timeline's lock).
    """
    names = [a.name for a in attachments]
    if len(names) != len(set(names)):
        raise InvalidInput("attachment names must be unique within a turn", details={"attachments": names})
    turn_id = turn_id or new_turn_id()
    # ``ts`` stays None when not given: blocks_store stamps the write's time, and a replay that
    # omits it again is not a different turn.
    stamp = ts
    new = [
        NewBlock(
            type=b.TURN_HEADER, author="system", turn_id=turn_id, ts=stamp, client_id=f"turn:{turn_id}:header"
        ),
        NewBlock(
            type=b.USER_PROMPT,
            author="user",
            turn_id=turn_id,
            ts=stamp,
            mime="text/plain",
            text=prompt,
            client_id=f"turn:{turn_id}:prompt",
        ),
    ]
    for att in attachments:
        meta: dict[str, Any] = {"name": att.name, "physical_path": f"{turn_id}/attachments/{att.name}"}
        if att.summary:
            meta["summary"] = att.summary
        new.append(
            NewBlock(
                type=b.USER_ATTACHMENT,
                author="user",
                turn_id=turn_id,
                ts=stamp,
                mime=att.mime,
                text=att.text,
                data=att.data,
                path=b.attachment_path(turn_id, att.name),
                meta=meta,
                client_id=f"turn:{turn_id}:att:{att.name}",
            )
        )
    return blocks_store(
        timeline=timeline,
        blocks=new,
        replays_check=lambda existing: turn_replay_check(
            timeline=timeline, turn_id=turn_id, attachments=names, existing=existing
        ),
    )


def turn_replay_check(
    *, timeline: Timeline, turn_id: str, attachments: Sequence[str], existing: dict[str | None, Block]
) -> None:
    """A turn started again must name the attachments it was stored with (Conflict otherwise):
    an extra one would be appended after later blocks, a missing one silently left out. Each
    block's own body is compared by ``block_replay_check``. Called by ``blocks_store`` under the
    timeline's lock with the stored blocks of the ids sent (``existing``): a new turn (its header
    not stored) costs no statement."""
    prefix = f"turn:{turn_id}:"
    if f"{prefix}header" not in existing:
        return
    stored_ids = {
        str(client_id)
        for client_id in Block.objects.filter(
            timeline_id=timeline.pk, turn_id=turn_id, client_id__startswith=prefix
        ).values_list("client_id", flat=True)
    }
    stored = sorted(
        cid.removeprefix(f"{prefix}att:") for cid in stored_ids if cid.startswith(f"{prefix}att:")
    )
    if stored != sorted(attachments):
        raise Conflict(
            "the turn is stored already with other attachments",
            details={"attachments": f"stored with {stored}, sent {sorted(attachments)}", "turn_id": turn_id},
        )
