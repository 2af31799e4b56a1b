"""The tenant settings on a connection whose server went away (a PostgreSQL restart under a
persistent connection, tests/e2e/test_chaos.py): clearing closes it and lets the request go on (a new
connection starts with nothing set); setting a tenant is Django's ``OperationalError``, which the
API answers with a 503, never a 500."""

from __future__ import annotations

import psycopg
import pytest
from django.db import OperationalError
from django.db.utils import DatabaseErrorWrapper

from timeline_app import tenancy


class DeadConnection:
    """Django's connection wrapper, cut down, over a driver connection whose server is gone."""

    vendor = "postgresql"
    Database = psycopg
    errors_occurred = False

    def __init__(self) -> None:
        self.connection: DeadConnection | None = self
        self.closed = False

    @property
    def wrap_database_errors(self) -> DatabaseErrorWrapper:
        return DatabaseErrorWrapper(self)

    def cursor(self):
        raise psycopg.errors.AdminShutdown("terminating connection due to administrator command")

    def close(self) -> None:
        self.closed = True
        self.connection = None


@pytest.fixture
def dead(monkeypatch) -> DeadConnection:
    connection = DeadConnection()
    monkeypatch.setattr(tenancy, "connections", {"default": connection})
    return connection


def test_clearing_a_dead_connection_closes_it_and_the_request_goes_on(dead):
    tenancy.scope_clear()
    assert dead.closed


def test_setting_a_tenant_on_a_dead_connection_is_an_operational_error(dead):
    with pytest.raises(OperationalError):
        tenancy.tenant_set(1)
    assert dead.closed
