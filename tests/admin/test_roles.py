"""The support and operator groups: created by migrate, idempotently, with exactly their permissions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from timeline_app import roles


def _codenames(group: Group) -> set[str]:
    return set(group.permissions.values_list("codename", flat=True))


@pytest.mark.django_db
def test_migrate_creates_the_support_and_operator_groups():
    # No explicit call: the post_migrate receiver ran when the test database was migrated.
    assert set(
        Group.objects.filter(name__in=[roles.SUPPORT, roles.OPERATOR]).values_list("name", flat=True)
    ) == {
        roles.SUPPORT,
        roles.OPERATOR,
    }


@pytest.mark.django_db
def test_support_group_may_only_view():
    support, _ = roles.ensure_roles()
    codenames = _codenames(support)
    assert codenames == {f"view_{model}" for model in roles.VIEWABLE_MODELS}
    assert not any(c.startswith(("add_", "change_", "delete_")) for c in codenames)


@pytest.mark.django_db
def test_operator_group_may_view_compact_and_export():
    _, operator = roles.ensure_roles()
    assert _codenames(operator) == {f"view_{m}" for m in roles.VIEWABLE_MODELS} | {
        roles.COMPACT,
        roles.EXPORT,
    }


@pytest.mark.django_db
def test_custom_permissions_live_on_the_conversation_content_type():
    roles.ensure_roles()
    for codename in (roles.COMPACT, roles.EXPORT):
        permission = Permission.objects.get(codename=codename)
        assert permission.content_type.app_label == "timeline_app"
        assert permission.content_type.model == "conversation"


@pytest.mark.django_db
def test_ensure_roles_is_idempotent_and_keeps_hand_made_grants():
    support, _ = roles.ensure_roles()
    extra = Permission.objects.get(codename="view_apikey")
    support.permissions.add(extra)
    before = (Group.objects.count(), Permission.objects.count())
    roles.ensure_roles()
    roles.ensure_roles()
    assert (Group.objects.count(), Permission.objects.count()) == before
    assert "view_apikey" in _codenames(Group.objects.get(name=roles.SUPPORT))


@pytest.mark.django_db
def test_permission_helpers_follow_the_groups(support_user, operator_user, superuser):
    assert not roles.can_compact(support_user) and not roles.can_export(support_user)
    assert roles.can_compact(operator_user) and roles.can_export(operator_user)
    assert roles.can_compact(superuser) and roles.can_export(superuser)
