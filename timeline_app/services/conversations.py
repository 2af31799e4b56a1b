"""Writes of conversations and their contexts' rows."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from timeline_app.errors import Conflict, InvalidInput
from timeline_app.models import Conversation, Tenant, Timeline
from timeline_app.rendering.settings import validate_overrides


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
        Conversation.objects.filter(pk=conversation.pk, tenant_id=conversation.tenant_id).update(**fields)
        for name, value in fields.items():
            setattr(conversation, name, value)
    return conversation


def context_room_require(*, conversation: Conversation) -> None:
    """Call inside a transaction before creating a context: locks the conversation row (concurrent
    creations queue) and raises InvalidInput when it holds ``TIMELINE_MAX_CONTEXTS_PER_CONVERSATION``."""
    limit = django_settings.TIMELINE_MAX_CONTEXTS_PER_CONVERSATION
    Conversation.objects.select_for_update().filter(pk=conversation.pk).values_list("pk").first()
    if Timeline.objects.filter(conversation=conversation).count() >= limit:
        raise InvalidInput(
            f"a conversation holds at most {limit} contexts",
            details={"contexts": f"at most {limit} per conversation"},
        )


def timeline_get_or_create(*, conversation: Conversation, name: str) -> Timeline:
    timeline = Timeline.objects.filter(conversation=conversation, name=name).first()
    if timeline is not None:
        return timeline
    with transaction.atomic():
        context_room_require(conversation=conversation)
        timeline, _ = Timeline.objects.get_or_create(conversation=conversation, name=name)
    return timeline


@transaction.atomic
def conversation_delete(*, conversation: Conversation) -> int:
    """Erase a conversation with everything it owns: its contexts' blocks (binaries included),
    summaries and compaction records, sources, render history (the tenant's right to erase).
    Returns how many rows went."""
    deleted, _ = conversation.delete()
    return deleted


def conversations_expire(*, now: datetime, idle_days: float, batch: int) -> int:
    """Erase up to ``batch`` conversations idle for more than ``idle_days`` (the retention beat job;
    bounded per run, the next run goes on). Returns how many conversations went."""
    idle = Conversation.objects.filter(last_activity_at__lt=now - timedelta(days=idle_days))
    expired = 0
    for conversation in idle.order_by("last_activity_at", "pk")[:batch]:
        conversation_delete(conversation=conversation)
        expired += 1
    return expired
