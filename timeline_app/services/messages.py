"""Writes of OpenAI-format messages into a named context (seed 004; the mapping is pure:
``timeline_app.rendering.messages``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from timeline_app.errors import Conflict, InvalidInput
from timeline_app.models import Block, Timeline
from timeline_app.rendering.message_validation import parse_messages as parse_message_list
from timeline_app.rendering.messages import (
    NewMessage,
    StoredMessage,
    message_block,
    stored_message,
)
from timeline_app.rendering.meta import meta_problem
from timeline_app.rendering.times import iso_utc
from timeline_app.services.blocks import blocks_append, meta_limits


def parse_messages(raw: Any, *, now: datetime | None = None) -> list[NewMessage]:
    """Validate a list of OpenAI chat messages against the configured limits (InvalidInput): the
    meta each would be stored with is capped like any block's (``rendering.meta``)."""
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


def _message_replay_check(stored: Block, new: Block) -> dict[str, str]:
    if stored.meta.get("openai_message") == new.meta.get("openai_message"):
        return {}
    message_id = str(new.meta.get("message_id") or new.client_id)
    return {message_id: "stored already with a different message"}


def messages_append(*, timeline: Timeline, messages: Sequence[NewMessage]) -> list[StoredMessage]:
    """Append messages in order; a message whose id is stored already comes back as stored.

    The same id with a different message is a conflict (409) and nothing is stored; the check runs
    under the timeline's lock, so of concurrent sends of one id with different messages exactly one
    is stored (201) and the others are conflicts.
    """
    try:
        rows = blocks_append(
            timeline=timeline,
            blocks=[message_block(m) for m in messages],
            replay_check=_message_replay_check,
        )
    except Conflict as exc:
        raise Conflict(
            "a message_id is stored already with a different message", details=exc.details
        ) from exc
    return [m for row in rows if (m := stored_message(row.seq, row.meta)) is not None]
