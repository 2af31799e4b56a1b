"""Admin roles: a ``support`` group (view only) and an ``operator`` group (view + compact + export).

The two extra permissions live on the Conversation content type and are created here, not in
``Meta.permissions``, so no migration is needed. :func:`ensure_roles` is idempotent and runs after
every ``migrate`` (and after the test runner's flushes) through a ``post_migrate`` receiver
connected in ``TimelineAppConfig.ready``. It only adds: permissions an administrator granted by
hand stay as they are.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractUser, AnonymousUser, Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import DEFAULT_DB_ALIAS

from timeline_app.models import Conversation

SUPPORT = "support"
OPERATOR = "operator"

APP_LABEL = "timeline_app"
COMPACT = "compact_conversation"
EXPORT = "export_conversation"
CUSTOM_PERMISSIONS = {
    COMPACT: "Can trigger a compaction of a conversation",
    EXPORT: "Can export a conversation timeline (conv.timeline.v1)",
}
# Models support staff may look at. API keys are deliberately left out.
VIEWABLE_MODELS = ("tenant", "conversation", "timeline", "block", "compaction", "source")


def ensure_roles(*, using: str = DEFAULT_DB_ALIAS) -> tuple[Group, Group]:
    """Create (or complete) the ``support`` and ``operator`` groups and the custom permissions."""
    content_type = ContentType.objects.db_manager(using).get_for_model(Conversation)
    custom = [
        Permission.objects.using(using).get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )[0]
        for codename, name in CUSTOM_PERMISSIONS.items()
    ]
    view = list(
        Permission.objects.using(using).filter(
            content_type__app_label=APP_LABEL,
            codename__in=[f"view_{model}" for model in VIEWABLE_MODELS],
        )
    )
    support, _ = Group.objects.using(using).get_or_create(name=SUPPORT)
    support.permissions.add(*view)
    operator, _ = Group.objects.using(using).get_or_create(name=OPERATOR)
    operator.permissions.add(*view, *custom)
    return support, operator


def create_roles_after_migrate(sender: Any, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """``post_migrate`` receiver (sender: this app's config)."""
    ensure_roles(using=using)


def can_compact(user: AbstractUser | AnonymousUser) -> bool:
    return user.is_active and user.has_perm(f"{APP_LABEL}.{COMPACT}")


def can_export(user: AbstractUser | AnonymousUser) -> bool:
    return user.is_active and user.has_perm(f"{APP_LABEL}.{EXPORT}")
