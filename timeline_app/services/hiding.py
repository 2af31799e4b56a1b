"""The hide state of stored blocks: the only write a stored block ever gets (DESIGN §3).

A hidden block stays stored with its text; it renders as its replacement text. Manual hides (the
seeds' ``react.hide``) and TTL pruning both write through ``hides_store``; ``blocks_unhide`` undoes
either (a popped message is no hide: it stays popped).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, transaction

from timeline_app.domain.costs import hidden_tokens
from timeline_app.domain.messages import POPPED_REASON
from timeline_app.domain.operations import HIDDEN, UNHIDDEN
from timeline_app.errors import NotFound
from timeline_app.models import Block, Timeline
from timeline_app.rendering.ttl import Hide, stored_replacement_tokens
from timeline_app.services.conversations import timeline_lock
from timeline_app.services.operations import operation_record

MANUAL_REASON = "manual"


# Rows per UPDATE on SQLite: 4 parameters a row stays far below its parameter limit.
HIDES_PER_STATEMENT = 500


def hides_store(*, timeline: Timeline, hides: Sequence[Hide]) -> None:
    """Store hides by seq; blocks hidden meanwhile keep their first hide. Call inside a
    transaction that holds the context's row lock (``timeline_lock``, or an UPDATE of the row).

    Joined on the ``(timeline, seq)`` unique index, linear in the number of hides
    (``bulk_update`` builds a ``CASE WHEN`` per row and per column, quadratic in the batch).
    PostgreSQL: one ``UPDATE … FROM unnest(…)`` with four array parameters, however many hides
    (thousands of placeholders cost the driver more than the update). SQLite (3.33+): one
    ``UPDATE … FROM (VALUES …)`` per ``HIDES_PER_STATEMENT`` hides.
    """
    hides = list({hide.seq: hide for hide in hides}.values())
    if not hides:
        return
    table = Block._meta.db_table
    update = (
        f"UPDATE {table} SET hidden = TRUE, replacement_text = v.column2, hidden_reason = v.column3, "
        f"replacement_tokens = v.column4 FROM {{source}} "
        f"WHERE {table}.timeline_id = %s AND {table}.seq = v.column1 AND {table}.hidden = FALSE"
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            source = "unnest(%s::bigint[], %s::text[], %s::text[], %s::integer[]) AS v(column1, column2, column3, column4)"
            cursor.execute(
                update.format(source=source),
                [
                    [hide.seq for hide in hides],
                    [hide.replacement_text for hide in hides],
                    [hide.reason for hide in hides],
                    [hide.replacement_tokens for hide in hides],
                    timeline.pk,
                ],
            )
            return
        for start in range(0, len(hides), HIDES_PER_STATEMENT):
            chunk = hides[start : start + HIDES_PER_STATEMENT]
            values = ", ".join(
                ["(CAST(%s AS BIGINT), CAST(%s AS TEXT), CAST(%s AS TEXT), CAST(%s AS INTEGER))"] * len(chunk)
            )
            params: list[int | str] = []
            for hide in chunk:
                params += [hide.seq, hide.replacement_text, hide.reason, hide.replacement_tokens]
            cursor.execute(update.format(source=f"(VALUES {values}) AS v"), [*params, timeline.pk])


def blocks_hide(*, timeline: Timeline, path: str, replacement_text: str) -> list[Block]:
    """Hide every not-yet-hidden block at ``path``; already hidden ones stay as they are."""
    with transaction.atomic(savepoint=False):
        timeline_lock(timeline=timeline, fields=("id",))
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
        if hides:  # the operations log: the blocks' tokens before and after, in this transaction
            shown = sum(row.tokens for row in rows if not row.hidden)
            after = sum(hide.replacement_tokens for hide in hides)
            seqs = [hide.seq for hide in hides]
            operation_record(
                timeline=timeline,
                kind=HIDDEN,
                tokens_before=shown,
                tokens_after=after,
                seqs=seqs,
                paths=[path],
            )
    return list(Block.objects.filter(timeline=timeline, path=path).order_by("seq"))


def blocks_unhide(*, timeline: Timeline, path: str) -> list[Block]:
    """Show every hidden block at ``path`` again from the next render on, whoever hid it (an
    agent's ``react.hide`` or TTL pruning); visible ones stay as they are.

    The block gets back the state it was written with: no replacement text, and as its
    ``replacement_tokens`` what it would cost once TTL-pruned. A block TTL pruning had hidden can
    be pruned again by the next render that finds the cache cold (it is still old). Blocks of
    popped messages stay popped: popping is no hide (resend the message under a new id).
    """
    with transaction.atomic(savepoint=False):
        timeline_lock(timeline=timeline, fields=("id",))
        rows = list(Block.objects.select_for_update().filter(timeline=timeline, path=path).order_by("seq"))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        shown: list[int] = []
        before = after = 0
        for row in rows:
            if not row.hidden or row.hidden_reason == POPPED_REASON:
                continue
            before += row.replacement_tokens
            shown.append(row.seq)
            row.hidden, row.replacement_text, row.hidden_reason = False, "", ""
            row.replacement_tokens = stored_replacement_tokens(row.to_value())
            Block.objects.filter(timeline=timeline, seq=row.seq).update(
                hidden=False, replacement_text="", hidden_reason="", replacement_tokens=row.replacement_tokens
            )
            after += row.tokens
        if shown:  # the operations log, in this transaction
            operation_record(
                timeline=timeline,
                kind=UNHIDDEN,
                tokens_before=before,
                tokens_after=after,
                seqs=shown,
                paths=[path],
            )
    return rows
