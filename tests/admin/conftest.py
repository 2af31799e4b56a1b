from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from tests.admin.builders import compacted_conversation
from timeline_app import roles
from timeline_app.models import Conversation, Tenant, Timeline


def _staff(username: str, group: str | None = None, *, superuser: bool = False) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username, is_staff=True)
    if superuser:
        user.is_superuser = True
        user.save()
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def roles_ready(db) -> None:
    """The groups come from the post_migrate receiver; make sure even after a flush."""
    roles.ensure_roles()


@pytest.fixture
def support_user(roles_ready) -> User:
    return _staff("sam-support", roles.SUPPORT)


@pytest.fixture
def operator_user(roles_ready) -> User:
    return _staff("olga-operator", roles.OPERATOR)


@pytest.fixture
def superuser(roles_ready) -> User:
    return _staff("root", superuser=True)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def support(support_user) -> Client:
    return _client(support_user)


@pytest.fixture
def operator(operator_user) -> Client:
    return _client(operator_user)


@pytest.fixture
def admin_client_(superuser) -> Client:
    return _client(superuser)


@pytest.fixture
def tenant(db) -> Tenant:
    return Tenant.objects.create(name="acme")


@pytest.fixture
def compacted(tenant) -> tuple[Conversation, Timeline]:
    return compacted_conversation(tenant)
