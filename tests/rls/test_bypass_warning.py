"""A role that skips row-level security is reported (issue 26, docs/operations.md "Roles"): a
WARNING once per process at the first connection, and a ``check --deploy`` warning. The suite
connects as ``postgres``, a superuser: both fire; as the plain application role
(tests/rls_support.py) neither does."""

from __future__ import annotations

import logging

import pytest
from django.core import checks
from django.db import connection, connections

from timeline_app import tenancy

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row-level security is PostgreSQL's")


@pytest.fixture
def fresh_process(monkeypatch):
    """As if no connection had been made in this process yet."""
    monkeypatch.setattr(tenancy, "_bypass_checked", False)


def bypass_warnings(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "timeline_app.tenancy" and r.levelno == logging.WARNING
    ]


def test_a_superuser_connection_is_reported_once_per_process(fresh_process, caplog):
    opened = []
    with caplog.at_level(logging.WARNING, logger="timeline_app.tenancy"):
        for _ in range(2):  # two new connections: the first one is checked, not the second
            wrapper = connections.create_connection("default")
            wrapper.ensure_connection()
            opened.append(wrapper)
    for wrapper in opened:
        wrapper.close()
    [message] = bypass_warnings(caplog)
    assert "postgres (superuser)" in message
    assert "docs/operations.md" in message


def test_the_application_role_is_not_reported(fresh_process, app_role, caplog):
    with caplog.at_level(logging.WARNING, logger="timeline_app.tenancy"):
        tenancy.warn_if_policies_bypassed(sender=None, connection=connection)
    assert bypass_warnings(caplog) == []
    assert tenancy._bypass_checked  # checked: the next connection of this process asks nothing


def test_a_bypassrls_role_is_reported(fresh_process, _app_role, caplog):
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE timeline_rls_bypass NOSUPERUSER BYPASSRLS NOLOGIN")
        cursor.execute("SET ROLE timeline_rls_bypass")
    try:
        with caplog.at_level(logging.WARNING, logger="timeline_app.tenancy"):
            tenancy.warn_if_policies_bypassed(sender=None, connection=connection)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
    [message] = bypass_warnings(caplog)
    assert "timeline_rls_bypass (BYPASSRLS)" in message


def test_check_deploy_warns_for_a_superuser():
    messages = checks.run_checks(include_deployment_checks=True, tags=[checks.Tags.security])
    [warning] = [m for m in messages if m.id == "timeline.W001"]
    assert "postgres (superuser)" in warning.msg


def test_check_deploy_is_quiet_for_the_application_role(app_role):
    assert tenancy.check_role_is_subject_to_policies() == []
