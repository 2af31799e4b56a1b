"""Writes of conversations and their contexts' rows."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from timeline_app.errors import Conflict
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


def timeline_get_or_create(*, conversation: Conversation, name: str) -> Timeline:
    timeline, _ = Timeline.objects.get_or_create(conversation=conversation, name=name)
    return timeline
