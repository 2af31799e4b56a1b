"""Writes of tenants, keys, conversations, contexts, turns and blocks."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from timeline_app import selectors
from timeline_app.errors import Conflict, InvalidInput, NotFound
from timeline_app.models import ApiKey, Block, Conversation, Tenant, Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.costs import block_tokens
from timeline_app.rendering.settings import validate_overrides


def iso_now(now: datetime | None = None) -> str:
    """An ISO-8601 UTC time with a ``Z``, the form the seeds show (``2026-02-09T02:14:32.676425Z``)."""
    moment = (now or timezone.now()).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------- tenants and keys


def api_key_create(*, tenant_name: str, name: str = "") -> tuple[ApiKey, str]:
    """Create the tenant if needed and a new key for it; the raw key is returned once, never stored."""
    tenant, _ = Tenant.objects.get_or_create(name=tenant_name)
    raw = ApiKey.generate_raw_key()
    key = ApiKey.objects.create(
        tenant=tenant, name=name, prefix=raw[: ApiKey.PREFIX_LENGTH], key_hash=ApiKey.hash_key(raw)
    )
    return key, raw


def api_key_revoke(*, prefix: str) -> int:
    """Revoke every active key whose prefix (or whole key) matches; returns how many."""
    candidates = ApiKey.objects.filter(revoked_at__isnull=True)
    if len(prefix) > ApiKey.PREFIX_LENGTH:
        candidates = candidates.filter(key_hash=ApiKey.hash_key(prefix))
    else:
        candidates = candidates.filter(prefix=prefix)
    return candidates.update(revoked_at=timezone.now())


# ---------------------------------------------------------------- conversations


def new_public_id(prefix: str = "conv") -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


@transaction.atomic
def conversation_create(
    *,
    tenant: Tenant,
    public_id: str | None = None,
    title: str = "",
    settings: dict[str, Any] | None = None,
    started_at: datetime | None = None,
) -> Conversation:
    clean_settings = validate_overrides(settings or {})
    now = timezone.now()
    conversation = Conversation(
        tenant=tenant,
        public_id=public_id or new_public_id(),
        title=title,
        settings=clean_settings,
        started_at=started_at or now,
        last_activity_at=now,
    )
    try:
        with transaction.atomic():
            conversation.save()
    except IntegrityError as exc:
        raise Conflict(
            f"conversation {conversation.public_id!r} already exists", details={"id": conversation.public_id}
        ) from exc
    Timeline.objects.create(conversation=conversation, name=Timeline.DEFAULT_NAME)
    return conversation


def timeline_get_or_create(*, conversation: Conversation, name: str) -> Timeline:
    timeline, _ = Timeline.objects.get_or_create(conversation=conversation, name=name)
    return timeline


# ---------------------------------------------------------------- blocks


@dataclass
class NewBlock:
    """A block as a client contributes it (validated by the API layer or built by a service)."""

    type: str
    author: str = ""
    turn_id: str | None = None
    ts: str | None = None
    mime: str = ""
    text: str = ""
    data: bytes = b""
    path: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    client_id: str | None = None


def default_path(*, type: str, turn_id: str, meta: dict[str, Any]) -> str:
    """The seed path of a well-known block type (seed 000 "Stable Paths"); empty when none applies."""
    tool_call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else ""
    if not turn_id:
        return ""
    if type == b.USER_PROMPT:
        return b.user_prompt_path(turn_id)
    if type == b.ASSISTANT_COMPLETION:
        return b.completion_path(turn_id)
    if type == b.USER_ATTACHMENT and isinstance(meta.get("name"), str) and meta["name"]:
        return b.attachment_path(turn_id, meta["name"])
    if tool_call_id:
        if type == b.TOOL_CALL:
            return b.tool_call_path(turn_id, tool_call_id)
        if type == b.TOOL_RESULT:
            return b.tool_result_path(turn_id, tool_call_id)
        if type == b.NOTES:
            return b.notes_path(turn_id, tool_call_id)
    return ""


def blocks_append(*, timeline: Timeline, blocks: Sequence[NewBlock]) -> list[Block]:
    """Append blocks in order; a block whose client id is already stored comes back as stored.

    Sequence numbers are allocated under a row lock on the timeline, so concurrent writers never
    collide; earlier rows are never touched (append is O(1) in the timeline's length).
    """
    ids = [nb.client_id for nb in blocks if nb.client_id]
    if len(ids) != len(set(ids)):
        raise InvalidInput("the same block id appears twice in one request", details={"id": "duplicate"})
    # Blocks without a turn_id join the current turn: look it up only when one needs it.
    needs_turn = any(nb.turn_id is None for nb in blocks)
    current_turn = selectors.timeline_current_turn_id(timeline=timeline) if needs_turn else ""
    # Replays (same client id) come back as stored: do not tokenize them again. Stored blocks are
    # never deleted, so an id seen here is still there under the lock below.
    known = (
        set(Block.objects.filter(timeline=timeline, client_id__in=ids).values_list("client_id", flat=True))
        if ids
        else set()
    )
    now_iso = iso_now()
    prepared: list[Block] = []
    for nb in blocks:
        if nb.type == b.SUMMARY:
            raise InvalidInput(
                "conv.range.summary blocks are written by compaction only", details={"type": nb.type}
            )
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
        if row.client_id not in known:
            row.tokens = block_tokens(row.to_value())
        prepared.append(row)

    with transaction.atomic(durable=True):
        locked = Timeline.objects.select_for_update().only("id", "next_seq").get(pk=timeline.pk)
        existing = (
            {blk.client_id: blk for blk in Block.objects.filter(timeline_id=locked.pk, client_id__in=ids)}
            if ids
            else {}
        )
        fresh = [row for row in prepared if row.client_id not in existing]
        for offset, row in enumerate(fresh):
            row.timeline_id = locked.pk
            row.seq = locked.next_seq + offset
        if fresh:
            Block.objects.bulk_create(fresh)
            Timeline.objects.filter(pk=locked.pk).update(
                next_seq=F("next_seq") + len(fresh), version=F("version") + 1
            )
            Conversation.objects.filter(pk=timeline.conversation_id).update(last_activity_at=timezone.now())
    return [existing.get(row.client_id, row) if row.client_id else row for row in prepared]


def new_turn_id(now: datetime | None = None) -> str:
    """``turn_<epoch ms>_<6 chars>``, the form the seeds show."""
    moment = now or timezone.now()
    return f"turn_{int(moment.timestamp() * 1000)}_{secrets.token_hex(3)}"


@dataclass
class NewAttachment:
    name: str
    mime: str
    data: bytes = b""
    text: str = ""
    summary: str = ""


def turn_start(
    *,
    timeline: Timeline,
    prompt: str,
    turn_id: str | None = None,
    attachments: Sequence[NewAttachment] = (),
    ts: str | None = None,
) -> list[Block]:
    """Write a turn's header, ``user.prompt`` and attachment blocks with their seed paths.

    Starting the same ``turn_id`` again returns the stored blocks: the client ids derive from it.
    """
    names = [a.name for a in attachments]
    if len(names) != len(set(names)):
        raise InvalidInput("attachment names must be unique within a turn", details={"attachments": names})
    turn_id = turn_id or new_turn_id()
    stamp = ts or iso_now()
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
    return blocks_append(timeline=timeline, blocks=new)


def timeline_require(*, conversation: Conversation, name: str) -> Timeline:
    timeline = selectors.timeline_get(conversation=conversation, name=name)
    if timeline is None:
        raise NotFound(f"context {name!r} not found", details={"context": name})
    return timeline


def tool_call_blocks(
    *,
    turn_id: str,
    tool_call_id: str,
    tool_id: str,
    params: Any,
    result: Any,
    note: str | None = None,
    status: str = "ok",
    result_mime: str = "application/json",
) -> list[NewBlock]:
    """One tool round as blocks: an optional ``react.notes``, the ``react.tool.call`` and its
    ``react.tool.result`` (seed 000 "Visible Timeline"), all carrying the same ``tool_call_id``.

    ``result`` is stored as given when it is text, as JSON otherwise.
    """
    meta = {"tool_call_id": tool_call_id, "tool_id": tool_id}
    call_text = json.dumps(
        {"tool_id": tool_id, "tool_call_id": tool_call_id, "params": params}, ensure_ascii=False
    )
    result_text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    rows = (
        []
        if note is None
        else [NewBlock(type=b.NOTES, author="react", turn_id=turn_id, text=note, meta=dict(meta))]
    )
    return [
        *rows,
        NewBlock(
            type=b.TOOL_CALL,
            author="react",
            turn_id=turn_id,
            mime="application/json",
            text=call_text,
            meta=dict(meta),
        ),
        NewBlock(
            type=b.TOOL_RESULT,
            author="tool",
            turn_id=turn_id,
            mime=result_mime,
            text=result_text,
            meta={**meta, "status": status},
        ),
    ]
