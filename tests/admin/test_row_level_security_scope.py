"""The admin's row-level security scope (issue 26 with ``Tenant.staff_users``): a staff user
limited to some tenants runs with exactly those tenants set on the database session, not with
``scope = all``; so PostgreSQL alone keeps another tenant's rows out of the admin's pages even
with every tenant filter of the admin's queries dropped (``rls_support.strip_tenant_filters``)."""

from __future__ import annotations

import pytest
from django.core import signals

from tests import rls_support
from tests.admin import urls
from timeline_app.models import Tenant

pytestmark = pytest.mark.django_db


def _tenants_listed(client, model: str) -> tuple[set[str], list[str]]:
    """The tenants of the rows the admin lists for ``model``, read as the application role with
    the admin's tenant filters stripped, and the filters that were dropped."""
    with rls_support.strip_tenant_filters() as dropped, rls_support.app_role():
        signals.request_started.connect(rls_support.request_started, dispatch_uid="rls-admin-start")
        signals.request_finished.connect(rls_support.request_finished, dispatch_uid="rls-admin-finish")
        try:
            response = client.get(urls.changelist(model))
        finally:
            signals.request_started.disconnect(dispatch_uid="rls-admin-start")
            signals.request_finished.disconnect(dispatch_uid="rls-admin-finish")
    assert response.status_code == 200
    tenant_ids = {row.tenant_id for row in response.context["cl"].result_list}
    return set(Tenant.objects.filter(pk__in=tenant_ids).values_list("name", flat=True)), list(dropped)


@pytest.fixture
def _app_role_ready(_app_role):
    return _app_role


def test_a_staff_user_on_no_tenant_list_sees_every_tenant(support, two_tenants, _app_role_ready):
    for model in ("conversation", "block"):
        assert _tenants_listed(support, model)[0] == {"acme", "globex"}, model


def test_a_staff_user_limited_to_one_tenant_gets_only_its_rows_from_the_database(
    support, support_user, two_tenants, _app_role_ready
):
    Tenant.objects.get(name="acme").staff_users.add(support_user)
    for model in ("conversation", "block"):
        listed, dropped = _tenants_listed(support, model)
        assert dropped, model  # the admin's own tenant filters were removed: the database held the line
        assert listed == {"acme"}, model


def test_a_staff_user_limited_to_two_tenants_gets_both(support, support_user, two_tenants, _app_role_ready):
    for name in ("acme", "globex"):
        Tenant.objects.get(name=name).staff_users.add(support_user)
    for model in ("conversation", "block"):
        assert _tenants_listed(support, model)[0] == {"acme", "globex"}, model
