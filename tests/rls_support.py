"""Row-level security in tests (issue 26): the suite connects as ``postgres``, a superuser, and
superusers skip every policy. So the tests that check the database's own isolation run their
queries as ``APP_ROLE``, a plain role (``NOSUPERUSER NOBYPASSRLS``) granted on the tables, with
``SET ROLE``; fixtures still plant their rows as the superuser.

``TIMELINE_TEST_RLS_ONLY=1`` (``make test-rls``, docs/testing.md) re-runs the cross-tenant tests
with the database alone holding the line: every request runs as ``APP_ROLE`` and, while it runs,
every tenant filter a query asks for is dropped (``strip_tenant_filters``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, models
from django.db.models.query import QuerySet

from timeline_app import tenancy

APP_ROLE = "timeline_rls_app"

TENANT_LOOKUPS = ("tenant", "tenant_id")


def create_app_role() -> None:
    """Once per test database: the role and its grants (roles belong to the cluster)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN "
            f"CREATE ROLE {APP_ROLE} NOSUPERUSER NOBYPASSRLS NOLOGIN; END IF; END $$"
        )
        cursor.execute(f"GRANT USAGE ON SCHEMA public TO {APP_ROLE}")
        cursor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {APP_ROLE}")
        cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}")


def _raw(sql: str) -> None:
    """Through the driver's cursor: not counted by the tests that pin query counts."""
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        cursor.execute(sql)


def as_app_role() -> None:
    _raw(f"SET ROLE {APP_ROLE}")


def as_superuser() -> None:
    _raw("RESET ROLE")


_held = threading.local()


@contextmanager
def app_role() -> Iterator[None]:
    """The whole block as the application role (the requests inside it too)."""
    as_app_role()
    _held.active = True
    try:
        yield
    finally:
        _held.active = False
        as_superuser()
        tenancy.scope_clear()


def current_settings() -> tuple[str, str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(current_setting(%s, true), ''), coalesce(current_setting(%s, true), ''),"
            " coalesce(current_setting(%s, true), '')",
            [tenancy.TENANT, tenancy.SCOPE, tenancy.API_KEY_HASH],
        )
        return tuple(cursor.fetchone())  # type: ignore[return-value]


_in_request = threading.local()


def _is_tenant_lookup(key: str) -> bool:
    return any(part in TENANT_LOOKUPS for part in key.split("__"))


def _without_tenant(q: Any) -> Any:
    if isinstance(q, models.Q):
        kept = [
            _without_tenant(child)
            for child in q.children
            if not (isinstance(child, tuple) and _is_tenant_lookup(child[0]))
        ]
        clone = models.Q(
            *[c for c in kept if not isinstance(c, tuple)], **dict(c for c in kept if isinstance(c, tuple))
        )
        clone.connector, clone.negated = q.connector, q.negated
        return clone
    return q


@contextmanager
def strip_tenant_filters() -> Iterator[list[str]]:
    """While a request runs, every ``filter``/``exclude``/``get`` drops its tenant lookups
    (``tenant=…``, ``tenant_id=…``, ``conversation__tenant=…``): the selectors' and services' scoping
    is gone. Yields the lookups dropped (a test asserts there were some)."""
    dropped: list[str] = []
    original = QuerySet._filter_or_exclude

    def stripped(self: QuerySet[Any], negate: bool, args: Any, kwargs: Any) -> QuerySet[Any]:
        if getattr(_in_request, "active", False):
            for key in [k for k in kwargs if _is_tenant_lookup(k)]:
                dropped.append(f"{self.model.__name__}.{key}")
                del kwargs[key]
            args = tuple(_without_tenant(q) for q in args)
        return original(self, negate, args, kwargs)

    QuerySet._filter_or_exclude = stripped  # type: ignore[method-assign]
    try:
        yield dropped
    finally:
        QuerySet._filter_or_exclude = original  # type: ignore[method-assign]


@contextmanager
def task_alone() -> Iterator[list[str]]:
    """A task body run inside as the application role with every tenant filter its queries ask
    for dropped (what ``database_alone`` does for requests): its own tenant scope
    (``tenancy.tenant_scope``) and row-level security are all that keep other tenants out.
    Yields the tenant lookups dropped."""
    with strip_tenant_filters() as dropped, app_role():
        _in_request.active = True
        try:
            yield dropped
        finally:
            _in_request.active = False


def request_started(**kwargs: Any) -> None:
    _in_request.active = True
    if not getattr(_held, "active", False):
        as_app_role()


def request_finished(**kwargs: Any) -> None:
    _in_request.active = False
    if connection.connection is not None and not getattr(_held, "active", False):
        as_superuser()


@contextmanager
def database_alone() -> Iterator[list[str]]:
    """The requests made inside run as ``APP_ROLE`` with every tenant filter dropped (what
    ``TIMELINE_TEST_RLS_ONLY=1`` does for a whole test), for a test that plants its rows first as
    the superuser. Yields the tenant lookups dropped."""
    from django.core import signals

    with strip_tenant_filters() as dropped, app_role():
        signals.request_started.connect(request_started, dispatch_uid="rls-alone-start")
        signals.request_finished.connect(request_finished, dispatch_uid="rls-alone-finish")
        try:
            yield dropped
        finally:
            signals.request_started.disconnect(dispatch_uid="rls-alone-start")
            signals.request_finished.disconnect(dispatch_uid="rls-alone-finish")
