"""Writes of OpenAI-format messages into a named context (seed 004; the mapping is pure:
``timeline_app.domain.messages``): append, and pop the newest."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.message_validation import parse_messages as parse_message_list
from timeline_app.domain.messages import (
    MESSAGE_BLOCK_TYPES,
    POPPED_REASON,
    NewMessage,
    StoredMessage,
    message_block,
    stored_message,
)
from timeline_app.domain.meta import meta_problem
from timeline_app.domain.operations import MESSAGES_ERASED
from timeline_app.domain.times import iso_utc
from timeline_app.errors import Conflict, InvalidInput
from timeline_app.models import Block, Timeline
from timeline_app.services.blocks import blocks_store, meta_limits
from timeline_app.services.conversations import timeline_lock
from timeline_app.services.operations import operation_record


def parse_messages(raw: Any, *, now: datetime | None = None) -> list[NewMessage]:
    """Validate a list of OpenAI chat messages against the configured limits (InvalidInput): the
    meta each would be stored with is capped like any block's (``domain.meta``)."""
    messages = parse_message_list(
        raw,
        now_iso=iso_utc(now or timezone.now()),
        max_messages=settings.TIMELINE_MAX_BLOCKS_PER_REQUEST,
        max_text_chars=settings.TIMELINE_MAX_BLOCK_TEXT_CHARS,
        max_attachment_bytes=settings.TIMELINE_MAX_ATTACHMENT_BYTES,
    )
    limits = meta_limits()
    problems = {
        f"messages[{i}]": problem
        for i, message in enumerate(messages)
        if (problem := meta_problem(message_block(message).meta, limits))
    }
    if problems:
        raise InvalidInput("a message is over the limits of a stored meta", details=problems)
    return messages


def _message_replay_check(stored: Block, new: NewBlock) -> dict[str, str]:
    message_id = str(new.meta.get("message_id") or new.client_id)
    if stored.hidden_reason == POPPED_REASON:
        return {message_id: "popped from the context; send the message with a new message_id"}
    if stored.meta.get("openai_message") == new.meta.get("openai_message"):
        return {}
    return {message_id: "stored already with a different message"}


def messages_append(*, timeline: Timeline, messages: Sequence[NewMessage]) -> list[StoredMessage]:
    """Append messages in order; a message whose id is stored already comes back as stored."""
    return messages_store(timeline=timeline, messages=messages)[0]


def messages_store(*, timeline: Timeline, messages: Sequence[NewMessage]) -> tuple[list[StoredMessage], int]:
    """Append messages in order; answers them (stored ones as stored) and how many were created.

    The same id with a different message, or the id of a popped message, is a conflict (409) and
    nothing is stored; the check runs
    under the timeline's lock, so of concurrent sends of one id with different messages exactly one
    is stored (201) and the others are conflicts.
    """
    try:
        appended = blocks_store(
            timeline=timeline,
            blocks=[message_block(m) for m in messages],
            replay_check=_message_replay_check,
        )
    except Conflict as exc:
        raise Conflict(
            "a message_id is stored already with a different message", details=exc.details
        ) from exc
    stored = [m for row in appended.rows if (m := stored_message(row.seq, row.meta)) is not None]
    return stored, appended.created


def message_pop(*, timeline: Timeline) -> StoredMessage | None:
    """Take the newest message since the last clear out of the context (``pop_item`` of the
    OpenAI Agents SDK); None when there is none.

    The only write is the hide state of that message's block (reason ``popped``): it stays stored
    and readable by path, and leaves the messages view, the render and compaction. The other
    messages are not touched (same ids, timestamps and places). Under the timeline's lock, so
    concurrent pops take different messages and an append lands before or after a pop, never
    half; the version moves like any change of the view.
    """
    with transaction.atomic(savepoint=False):
        locked = timeline_lock(timeline=timeline, fields=("id", "view_start_seq"))
        newest_first = (
            Block.objects.filter(
                timeline_id=locked.pk, seq__gte=locked.view_start_seq, type__in=MESSAGE_BLOCK_TYPES
            )
            .not_popped()
            .order_by("-seq")
            .values_list("seq", "meta")
        )
        # The first row is the message unless blocks written through the blocks API sit after it.
        popped = next(
            (m for seq, meta in newest_first.iterator(chunk_size=20) if (m := stored_message(seq, meta))),
            None,
        )
        if popped is None:
            return None
        Block.objects.filter(timeline_id=locked.pk, seq=popped.seq).update(
            hidden=True, replacement_text="", hidden_reason=POPPED_REASON, replacement_tokens=0
        )
        Timeline.objects.filter(pk=locked.pk).update(version=F("version") + 1)
        operation_record(
            timeline=timeline,
            kind=MESSAGES_ERASED,
            seqs=[popped.seq],
            details={"message_id": popped.message_id},
        )
    return popped
