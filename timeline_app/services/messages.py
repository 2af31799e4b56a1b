"""Writes of OpenAI-format messages into a named context (seed 004; the mapping is pure:
``timeline_app.rendering.messages``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from timeline_app.errors import Conflict
from timeline_app.models import Block, Timeline
from timeline_app.rendering.message_validation import parse_messages as parse_message_list
from timeline_app.rendering.messages import (
    CLIENT_ID_PREFIX,
    NewMessage,
    StoredMessage,
    message_block,
    stored_message,
)
from timeline_app.rendering.times import iso_utc
from timeline_app.services.blocks import blocks_append


def parse_messages(raw: Any, *, now: datetime | None = None) -> list[NewMessage]:
    """Validate a list of OpenAI chat messages against the configured limits (InvalidInput)."""
    return parse_message_list(
        raw,
        now_iso=iso_utc(now or timezone.now()),
        max_messages=settings.TIMELINE_MAX_BLOCKS_PER_REQUEST,
        max_text_chars=settings.TIMELINE_MAX_BLOCK_TEXT_CHARS,
        max_attachment_bytes=settings.TIMELINE_MAX_ATTACHMENT_BYTES,
    )


def messages_append(*, timeline: Timeline, messages: Sequence[NewMessage]) -> list[StoredMessage]:
    """Append messages in order; a message whose id is stored already comes back as stored.

    The same id with a different message is a conflict (409) and nothing is stored.
    """
    client_ids = [CLIENT_ID_PREFIX + m.message_id for m in messages]
    stored = {
        client_id: meta
        for client_id, meta in Block.objects.filter(timeline=timeline, client_id__in=client_ids).values_list(
            "client_id", "meta"
        )
    }
    conflicts = {
        m.message_id: "stored already with a different message"
        for m in messages
        if (meta := stored.get(CLIENT_ID_PREFIX + m.message_id)) is not None
        and meta.get("openai_message") != m.message
    }
    if conflicts:
        raise Conflict("a message_id is stored already with a different message", details=conflicts)
    rows = blocks_append(timeline=timeline, blocks=[message_block(m) for m in messages])
    return [m for row in rows if (m := stored_message(row.seq, row.meta)) is not None]
