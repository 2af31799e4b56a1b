"""Hide blocks by path (the seeds' ``react.hide``): the block stays stored, renders as its replacement."""

from __future__ import annotations

from django.db import transaction

from timeline_app.errors import NotFound
from timeline_app.models import Block, Timeline
from timeline_app.rendering.costs import hidden_tokens

MANUAL_REASON = "manual"


def blocks_hide(*, timeline: Timeline, path: str, replacement_text: str) -> list[Block]:
    """Hide every not-yet-hidden block at ``path``; already hidden ones stay as they are."""
    with transaction.atomic(durable=True):
        rows = list(Block.objects.select_for_update().filter(timeline=timeline, path=path).order_by("seq"))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        for row in rows:
            if row.hidden:
                continue
            row.hidden = True
            row.replacement_text = replacement_text
            row.hidden_reason = MANUAL_REASON
            row.replacement_tokens = hidden_tokens(row.to_value(), replacement_text)
            row.save(update_fields=["hidden", "replacement_text", "hidden_reason", "replacement_tokens"])
    return rows
