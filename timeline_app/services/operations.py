"""The operations log's one write (issue 35): ``operation_record``, called in the transaction of
the change it records, so an entry exists exactly when its change committed.

Who: the actor of the code running now (``acting_as``): an API request acts as its key
(``key:<prefix>``, set by ``api.base.TenantView``), an admin action as its staff user
(``staff:<name>``), everything else (the worker, the beat, commands) as ``system``.

Bounded per context like the render history (``render_history.timeline_history_trim``): every
record trims its context to the newest ``TIMELINE_OPERATIONS_LOG_MAX`` entries in the same
transaction, oldest first; on PostgreSQL the insert and the trim are one statement.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Subquery
from django.utils import timezone

from timeline_app.domain.operations import (
    COMPACTION_KINDS,
    SYSTEM,
    OperationEntry,
    compaction_details,
    operation_entry,
)
from timeline_app.models import Compaction, Operation, Timeline, fill_owners

_actor: ContextVar[str] = ContextVar("timeline_operation_actor", default=SYSTEM)


def current_actor() -> str:
    return _actor.get()


def actor_set(actor: str) -> Token[str]:
    """Act as ``actor`` until ``actor_reset`` with the token returned (a request's span)."""
    return _actor.set(actor)


def actor_reset(token: Token[str]) -> None:
    _actor.reset(token)


@contextmanager
def acting_as(actor: str) -> Iterator[None]:
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


_INSERT_AND_TRIM_SQL = """
WITH added AS (
    INSERT INTO {table} (timeline_id, tenant_id, conversation_id, public_id, at, kind, actor,
        tokens_before, tokens_after, seq_ranges, paths, compaction_id, model, cost_usd, details)
    VALUES (%(timeline)s, %(tenant)s, %(conversation)s, %(public_id)s, %(at)s, %(kind)s, %(actor)s,
        %(tokens_before)s, %(tokens_after)s, %(seq_ranges)s, %(paths)s, %(compaction_id)s, %(model)s,
        %(cost_usd)s, %(details)s)
    RETURNING id
), gone AS (
    DELETE FROM {table} WHERE timeline_id = %(timeline)s AND id <= (
        SELECT id FROM {table} WHERE timeline_id = %(timeline)s ORDER BY id DESC OFFSET %(skip)s LIMIT 1
    )
    RETURNING 1
)
SELECT (SELECT id FROM added), (SELECT count(*) FROM gone)
"""


def operation_record(
    *, timeline: Timeline, kind: str, now: datetime | None = None, actor: str | None = None, **fields: Any
) -> OperationEntry:
    """Record an operation of ``kind`` on ``timeline`` (``fields``: ``domain.operations.operation_entry``'s)
    as ``actor`` (default: ``current_actor()``) and trim the context's log to
    ``TIMELINE_OPERATIONS_LOG_MAX``. Call inside the transaction of the change it records."""
    entry = operation_entry(kind, actor=actor or current_actor(), **fields)
    row = Operation(
        timeline=timeline,
        at=now or timezone.now(),
        kind=entry.kind,
        actor=entry.actor,
        tokens_before=entry.tokens_before,
        tokens_after=entry.tokens_after,
        seq_ranges=entry.seq_ranges,
        paths=entry.paths,
        compaction_id=entry.compaction_id,
        model=entry.model,
        cost_usd=entry.cost_usd,
        details=entry.details,
    )
    keep = settings.TIMELINE_OPERATIONS_LOG_MAX
    if connection.vendor != "postgresql":
        row.save()
        rows = Operation.objects.filter(timeline_id=timeline.pk)
        cutoff = rows.order_by("-id").values("id")[keep - 1 : keep]
        rows.filter(id__lt=Subquery(cutoff)).delete()
        return entry
    # One round trip: the insert, and the trim of the entries beyond the newest ``keep - 1`` that
    # were there before it (a data-modifying CTE does not see the row it inserts).
    fill_owners([row])
    values = {
        field.attname: field.get_db_prep_save(getattr(row, field.attname), connection)
        for field in Operation._meta.concrete_fields
        if not field.primary_key
    }
    params = {
        "timeline": timeline.pk,
        "tenant": values["tenant_id"],
        "conversation": values["conversation_id"],
        **{name: values[name] for name in _COLUMNS},
        "skip": keep - 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_AND_TRIM_SQL.format(table=Operation._meta.db_table), params)
    return entry


_COLUMNS = (
    "public_id",
    "at",
    "kind",
    "actor",
    "tokens_before",
    "tokens_after",
    "seq_ranges",
    "paths",
    "compaction_id",
    "model",
    "cost_usd",
    "details",
)


def compaction_operation_record(
    row: Compaction, *, status: str | None = None, error: str | None = None, now: datetime | None = None
) -> None:
    """Record a compaction's outcome (its row's final ``status``, or ``status`` given): its id,
    model, summary cost, tokens before and after, the seqs it covered, its summary's path, and why
    (its error text, and the threshold it was planned against). ``status`` and ``error``: the final
    ones when ``row`` is the claim as it was read before its run finished."""
    final = status or row.status
    reverted = final == Compaction.Status.REVERTED
    summary = row._state.fields_cache.get("summary_block")
    before, after = row.before_tokens or None, row.after_tokens or None
    # The compaction's own owner keys: no read of its context.
    timeline = Timeline(pk=row.timeline_id, tenant_id=row.tenant_id, conversation_id=row.conversation_id)
    operation_record(
        timeline=timeline,
        kind=COMPACTION_KINDS[final],
        now=now,
        actor=(row.reverted_by or None) if reverted else None,
        # A revert takes the context from the compaction's after back to its before.
        tokens_before=after if reverted else before,
        tokens_after=before if reverted else after,
        ranges=[(row.covered_from_seq, row.covered_to_seq)] if row.covered_from_seq is not None else (),
        paths=[summary.path] if summary is not None else (),
        compaction_id=row.public_id,
        model=row.model,
        cost_usd=row.summary_cost_usd,
        details=compaction_details(
            error="" if reverted else (row.error if error is None else error),
            threshold_tokens=row.threshold_tokens,
        ),
    )
