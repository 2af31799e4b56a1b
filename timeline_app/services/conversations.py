"""Writes of conversations and their contexts' rows."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from timeline_app.domain.operations import CONTEXT_CREATED, SETTINGS_CHANGED, settings_change
from timeline_app.domain.settings import validate_overrides
from timeline_app.errors import Conflict, ConversationErased, InvalidInput
from timeline_app.models import (
    Block,
    Compaction,
    Conversation,
    Operation,
    RenderRecord,
    Source,
    Tenant,
    Timeline,
)
from timeline_app.services.operations import operation_record


def new_public_id(prefix: str = "conv") -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


@transaction.atomic(savepoint=False)
def conversation_create(
    *,
    tenant: Tenant,
    public_id: str | None = None,
    title: str = "",
    settings: dict[str, Any] | None = None,
    started_at: datetime | None = None,
    log_created: bool = True,
) -> Conversation:
    """A conversation with its ``main`` context (``log_created``: its operations log starts with
    ``context_created``; an import's starts with the exported log instead)."""
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
    main = Timeline.objects.create(conversation=conversation, name=Timeline.DEFAULT_NAME)
    if log_created:
        operation_record(timeline=main, kind=CONTEXT_CREATED, now=now)
    return conversation


def conversation_lock(*, conversation_id: int) -> None:
    """Call inside a transaction before writing any row of a conversation: locks its row
    ``FOR NO KEY UPDATE`` (what updating its ``last_activity_at`` takes anyway).

    Every writer takes this lock first, then its context's row (``timeline_lock``): one order, so
    no deadlock; and an erase, which locks the row ``FOR UPDATE``, waits for the writes in flight
    while the writes arriving after it wait for the erase, then find the conversation gone:
    ``ConversationErased`` (a 404).
    """
    locked = (
        Conversation.objects.select_for_update(no_key=True)
        .filter(pk=conversation_id)
        .values_list("pk", flat=True)
        .first()
    )
    if locked is None:
        raise ConversationErased("the conversation was erased", details={"conversation": "erased"})


def timeline_lock(*, timeline: Timeline, fields: tuple[str, ...] = ()) -> Timeline:
    """Call inside a transaction before writing a context's rows: locks the conversation
    (``conversation_lock``), then the context's row ``FOR UPDATE`` (appends allocate seqs under
    it). Returns the locked row (only ``fields`` of it when given)."""
    conversation_lock(conversation_id=timeline.conversation_id)
    rows = Timeline.objects.select_for_update().filter(pk=timeline.pk)
    locked = (rows.only(*fields) if fields else rows).first()
    if locked is None:
        raise ConversationErased("the conversation was erased", details={"conversation": "erased"})
    return locked


_APPEND_LOCK_SQL = """
WITH touched AS (
    UPDATE {conversations} SET last_activity_at = %(now)s WHERE id = %(conversation)s RETURNING id
)
SELECT t.id, t.next_seq FROM {timelines} t JOIN touched ON touched.id = t.conversation_id
WHERE t.id = %(timeline)s
FOR UPDATE OF t
"""


def timeline_lock_for_append(*, timeline: Timeline, now: datetime) -> tuple[int, int]:
    """``timeline_lock`` for an append, which also marks the conversation active: the
    conversation's ``last_activity_at`` set to ``now`` (an UPDATE takes the row ``FOR NO KEY
    UPDATE``, the lock ``conversation_lock`` takes), then the context's row ``FOR UPDATE``; one
    statement on PostgreSQL (the join waits for the update's row, so the locks come in the usual
    order), where three went before (issue 38). Returns the context's ``(id, next_seq)``."""
    erased = ConversationErased("the conversation was erased", details={"conversation": "erased"})
    if connection.vendor != "postgresql":
        if not Conversation.objects.filter(pk=timeline.conversation_id).update(last_activity_at=now):
            raise erased
        locked = timeline_lock(timeline=timeline, fields=("id", "next_seq"))
        return locked.pk, locked.next_seq
    sql = _APPEND_LOCK_SQL.format(
        conversations=Conversation._meta.db_table, timelines=Timeline._meta.db_table
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"now": now, "conversation": timeline.conversation_id, "timeline": timeline.pk})
        row = cursor.fetchone()
    if row is None:
        raise erased
    return int(row[0]), int(row[1])


def conversation_update(
    *, conversation: Conversation, title: str | None = None, settings: dict[str, Any] | None = None
) -> Conversation:
    """Change a conversation's title and/or settings (``PATCH``). ``settings`` replaces the whole
    overrides object (``{}`` goes back to the defaults), validated like at creation; the next
    render sees it (its cache report says ``settings_changed`` when the effective settings moved)."""
    fields: dict[str, Any] = {}
    if title is not None:
        fields["title"] = title
    if settings is not None:
        fields["settings"] = validate_overrides(settings)
    if fields:
        with transaction.atomic(savepoint=False):
            Conversation.objects.filter(pk=conversation.pk, tenant_id=conversation.tenant_id).update(**fields)
            moved = settings_change(
                conversation.settings or {}, fields.get("settings", conversation.settings)
            )
            for context in Timeline.objects.filter(conversation=conversation).order_by("pk") if moved else ():
                operation_record(timeline=context, kind=SETTINGS_CHANGED, details={"settings": moved})
        for name, value in fields.items():
            setattr(conversation, name, value)
    return conversation


def context_room_require(*, conversation: Conversation) -> None:
    """Call inside a transaction before creating a context: locks the conversation row (concurrent
    creations queue; ``conversation_lock``) and raises InvalidInput when it holds
    ``TIMELINE_MAX_CONTEXTS_PER_CONVERSATION``."""
    limit = django_settings.TIMELINE_MAX_CONTEXTS_PER_CONVERSATION
    conversation_lock(conversation_id=conversation.pk)
    if Timeline.objects.filter(conversation=conversation).count() >= limit:
        raise InvalidInput(
            f"a conversation holds at most {limit} contexts",
            details={"contexts": f"at most {limit} per conversation"},
        )


def timeline_get_or_create(*, conversation: Conversation, name: str) -> Timeline:
    timeline = Timeline.objects.filter(conversation=conversation, name=name).first()
    if timeline is not None:
        return timeline
    with transaction.atomic(savepoint=False):
        context_room_require(conversation=conversation)
        timeline, created = Timeline.objects.get_or_create(conversation=conversation, name=name)
        if created:
            operation_record(timeline=timeline, kind=CONTEXT_CREATED)
    return timeline


# What a conversation owns, in foreign-key order (a render may name a compaction, a compaction
# names its summary block); every table holds a ``timeline_id``.
_OWNED: tuple[type[models.Model], ...] = (Operation, RenderRecord, Compaction, Source, Block)


def conversation_delete(*, conversation: Conversation) -> int:
    """Erase a conversation with everything it owns: its contexts' blocks (binaries included),
    summaries and compaction records, sources, render history (the tenant's right to erase).
    Returns how many rows went (0 when it was gone already).

    The erase wins against concurrent writers: it locks the conversation row ``FOR UPDATE``, which
    waits for the writes in flight (each holds ``conversation_lock``) and holds back every write
    after it (they then answer 404), then its contexts' rows (writers that insert without the
    conversation lock, like a compaction's claim, fail their foreign key check after it instead
    of leaving an orphan). The rows then go by one ``DELETE`` per table, never loaded into memory:
    the time is that of the deletes, whatever the writers do (docs/transactions.md).
    """
    with transaction.atomic(savepoint=False):
        locked = Conversation.objects.select_for_update().filter(pk=conversation.pk).values_list("pk").first()
        if locked is None:
            return 0
        timeline_ids = list(
            Timeline.objects.select_for_update()
            .filter(conversation_id=conversation.pk)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        deleted = sum(_delete_rows(model, "timeline_id", timeline_ids) for model in _OWNED)
        deleted += _delete_rows(Timeline, "id", timeline_ids)
        deleted += _delete_rows(Conversation, "id", [conversation.pk])
    return deleted


def _delete_rows(model: type[models.Model], column: str, ids: list[int]) -> int:
    """``DELETE FROM <model's table> WHERE <column> IN ids``: one statement, no rows fetched (the
    ORM's ``delete()`` loads every row it cascades to first)."""
    if not ids:
        return 0
    quote = connection.ops.quote_name
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {quote(model._meta.db_table)} WHERE {quote(column)} IN ({marks})", ids)
        return int(cursor.rowcount)


def conversations_expire(*, now: datetime, idle_days: float, batch: int) -> int:
    """Erase up to ``batch`` conversations idle for more than ``idle_days`` (the retention beat job;
    bounded per run, the next run goes on). Returns how many conversations went."""
    idle = Conversation.objects.filter(last_activity_at__lt=now - timedelta(days=idle_days))
    expired = 0
    for conversation in idle.order_by("last_activity_at", "pk")[:batch]:
        # Like a DELETE, it wins against an agent still writing to it (the agent gets a 404);
        # erased meanwhile by its tenant, it does not count.
        expired += conversation_delete(conversation=conversation) > 0
    return expired
