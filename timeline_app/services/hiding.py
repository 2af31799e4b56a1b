"""The hide state of stored blocks: the only write a stored block ever gets (DESIGN §3).

A hidden block stays stored with its text; it renders as its replacement text. Manual hides (the
seeds' ``react.hide``) and TTL pruning both write through ``hides_store``.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from timeline_app.errors import NotFound
from timeline_app.models import Block, Timeline
from timeline_app.rendering.costs import hidden_tokens
from timeline_app.rendering.ttl import Hide

MANUAL_REASON = "manual"
_HIDE_FIELDS = ["hidden", "replacement_text", "hidden_reason", "replacement_tokens"]


def hides_store(*, timeline: Timeline, hides: Sequence[Hide]) -> None:
    """Store hides by seq in one statement; blocks hidden meanwhile keep their first hide."""
    if not hides:
        return
    by_seq = {hide.seq: hide for hide in hides}
    rows = list(Block.objects.filter(timeline=timeline, seq__in=by_seq, hidden=False).only("pk", "seq"))
    for row in rows:
        hide = by_seq[row.seq]
        row.hidden = True
        row.replacement_text = hide.replacement_text
        row.hidden_reason = hide.reason
        row.replacement_tokens = hide.replacement_tokens
    Block.objects.bulk_update(rows, _HIDE_FIELDS)


def blocks_hide(*, timeline: Timeline, path: str, replacement_text: str) -> list[Block]:
    """Hide every not-yet-hidden block at ``path``; already hidden ones stay as they are."""
    with transaction.atomic(durable=True):
        rows = list(Block.objects.select_for_update().filter(timeline=timeline, path=path).order_by("seq"))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        hides = [
            Hide(
                seq=row.seq,
                path=path,
                replacement_text=replacement_text,
                reason=MANUAL_REASON,
                replacement_tokens=hidden_tokens(row.to_value(), replacement_text),
            )
            for row in rows
            if not row.hidden
        ]
        hides_store(timeline=timeline, hides=hides)
    return list(Block.objects.filter(timeline=timeline, path=path).order_by("seq"))
