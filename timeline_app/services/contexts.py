"""Writes of named contexts (seed 004): create (by name or label, optionally branched from
another context's view), set the compaction strategy, clear the view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from compaction import strategies
from timeline_app import selectors
from timeline_app.domain.identifiers import CONTEXT_NAME_PATTERN, LABEL_PATTERN
from timeline_app.domain.messages import NewMessage, message_block, next_context_name
from timeline_app.domain.operations import CONTEXT_BRANCHED, CONTEXT_CLEARED, CONTEXT_CREATED
from timeline_app.errors import Conflict, InvalidInput
from timeline_app.models import Conversation, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_app.services.conversations import context_room_require, timeline_lock
from timeline_app.services.operations import operation_record

NAME_ATTEMPTS = 20


def normalize_strategy(raw: Any) -> dict[str, Any]:
    """A strategy config from a client, checked against the built-ins and the configured ones."""
    try:
        return strategies.normalize_strategy(raw, custom_names=selectors.custom_strategies())
    except strategies.StrategyError as exc:
        raise InvalidInput("invalid compaction strategy", details=exc.details) from exc


def context_create(
    *,
    conversation: Conversation,
    name: str | None = None,
    label: str | None = None,
    branch_from: str | None = None,
    compaction_strategy: Mapping[str, Any] | None = None,
) -> Timeline:
    """Create a context named ``name``, or the next free ``label_<letters>``; with ``branch_from``
    the new context starts with a copy of that context's view (same message ids and timestamps,
    so the full-context view shows each copied message once)."""
    if (name is None) == (label is None):
        raise InvalidInput("give either name or label", details={"label": "either name or label"})
    if name is not None and not CONTEXT_NAME_PATTERN.match(name):
        raise InvalidInput(
            "invalid context name", details={"name": f"must match {CONTEXT_NAME_PATTERN.pattern}"}
        )
    if label is not None and not LABEL_PATTERN.match(label):
        raise InvalidInput("invalid label", details={"label": f"must match {LABEL_PATTERN.pattern}"})
    strategy = normalize_strategy(compaction_strategy) if compaction_strategy is not None else {}
    source = selectors.timeline_require(conversation=conversation, name=branch_from) if branch_from else None

    # The source's view is read before the conversation is locked (a copy of the view as it was).
    copies = (
        [
            message_block(NewMessage(message=m.message, message_id=m.message_id, timestamp=m.timestamp))
            for m in selectors.context_view(timeline=source)
        ]
        if source is not None
        else []
    )
    # One transaction: the context appears with its copy or not at all. Each name attempt is a
    # savepoint, so a name taken meanwhile (IntegrityError) only undoes that attempt.
    with transaction.atomic(savepoint=False):
        timeline = _context_row_create(conversation=conversation, name=name, label=label, strategy=strategy)
        if copies:
            blocks_append(timeline=timeline, blocks=copies)
        kind, copied = (
            (CONTEXT_BRANCHED, {"branched_from": branch_from, "messages": len(copies)})
            if source
            else (CONTEXT_CREATED, {})
        )
        operation_record(timeline=timeline, kind=kind, details=copied)
    return timeline


def _context_row_create(
    *, conversation: Conversation, name: str | None, label: str | None, strategy: dict[str, Any]
) -> Timeline:
    """Insert the context's row under the conversation's lock, named ``name`` or the next free
    ``label_<letters>`` (retried when a concurrent creation took it). Call inside a transaction."""
    for _ in range(NAME_ATTEMPTS):
        candidate = name
        if candidate is None:
            assert label is not None
            names = Timeline.objects.filter(conversation=conversation, name__startswith=f"{label}_")
            candidate = next_context_name(label, names.values_list("name", flat=True))
        try:
            with transaction.atomic():
                context_room_require(conversation=conversation)
                return Timeline.objects.create(
                    conversation=conversation, name=candidate, compaction_strategy=strategy
                )
        except IntegrityError as exc:
            if name is not None:
                raise Conflict(f"context {name!r} already exists", details={"name": name}) from exc
    raise Conflict("could not find a free context name; try again", details={"label": label})


def context_set_strategy(*, timeline: Timeline, compaction_strategy: Mapping[str, Any]) -> Timeline:
    """Set the context's compaction strategy; nothing stored changes, only the view."""
    strategy = normalize_strategy(compaction_strategy)
    with transaction.atomic(savepoint=False):
        timeline_lock(timeline=timeline, fields=("id",))
        Timeline.objects.filter(pk=timeline.pk).update(compaction_strategy=strategy, version=F("version") + 1)
    timeline.compaction_strategy = strategy
    return timeline


def context_clear(*, timeline: Timeline) -> None:
    """``clear()``: the messages so far leave the context's view; they stay stored.

    One UPDATE reading ``next_seq`` in the database under the context's lock (the one appends
    take), so a concurrent append either lands before the new view start (cleared) or after it
    (visible), never half.
    """
    with transaction.atomic(savepoint=False):
        was = timeline_lock(timeline=timeline, fields=("id", "view_start_seq", "next_seq"))
        Timeline.objects.filter(pk=timeline.pk).update(view_start_seq=F("next_seq"), version=F("version") + 1)
        timeline.refresh_from_db(fields=["view_start_seq", "next_seq", "version"])
        operation_record(
            timeline=timeline, kind=CONTEXT_CLEARED, ranges=[(was.view_start_seq, was.next_seq - 1)]
        )
