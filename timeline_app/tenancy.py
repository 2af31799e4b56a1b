"""Tenant isolation the database enforces (issue 26; docs/operations.md "Tenant isolation").

On PostgreSQL every tenant-owned table has row-level security, ``FORCE``d (its owner is subject
too), with one policy (``POLICY``): a row is visible and writable only when its ``tenant_id`` is
the session's ``timeline.tenant_id`` setting, or when the session's ``timeline.scope`` is ``all``.
A session that set nothing sees no row and can insert none. Who sets what:

* the API: ``ApiKeyAuthentication`` looks the key up under ``api_key_lookup_scope`` (which shows
  exactly the one key row whose hash the caller presented, nothing else); the lookup's own
  statement then sets the key's tenant (``key_row_claims_tenant_sql``), before the view runs a query;
* ``TenantScopeMiddleware`` clears all of it as every request starts (no round trip when the
  connection is known clear: the previous request cleared it outside a transaction, and nothing
  was written since), and ``scope_clear`` runs again
  when the response is closed (``request_finished``, after a streamed body too), so a persistent
  connection (``CONN_MAX_AGE`` > 0) never carries one request's tenant into the next; staff users
  on the admin get ``scope=all`` (the admin is a support console over every tenant), or the list
  of their tenants when ``Tenant.staff_users`` limits them (``staff_tenant_ids``);
* Celery tasks: ``compact_timeline`` runs under its timeline's tenant (``tenant_scope``); the beat
  sweep, render-history trim and retention, management commands and migrations widen with
  ``tenant_scope_all`` / ``pre_migrate``, explicitly.

Superusers and roles with ``BYPASSRLS`` skip every policy: the application must connect as a role
that is neither. ``warn_if_policies_bypassed`` (``connection_created``) logs a WARNING once per
process when it does not, and ``check_role_is_subject_to_policies`` is a ``check --deploy`` warning. SQLite (the embedded mode) has no row-level security; there the queries' own
tenant filters are the only guarantee, and every function here does nothing.

The statements that set these go through the driver's own cursor, not Django's: they are
plumbing, the same few per request, and stay out of query logs and the query counts tests pin.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.core import checks
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.operations.base import Operation
from django.http import HttpRequest, HttpResponseBase

TENANT = "timeline.tenant_id"
SCOPE = "timeline.scope"
API_KEY_HASH = "timeline.api_key_hash"
ALL = "all"

_NAMES = (TENANT, SCOPE, API_KEY_HASH)
_CLEAR = ("", "", "")
_SET = "SELECT " + ", ".join(f"set_config('{name}', %s, false)" for name in _NAMES)
_READ = "SELECT " + ", ".join(f"coalesce(current_setting('{name}', true), '')" for name in _NAMES)

POLICY_NAME = "timeline_tenant_isolation"
KEY_LOOKUP_POLICY_NAME = "timeline_api_key_lookup"
# Each setting is read once per statement (an init plan), not once per row.
# ``timeline.tenant_id`` is one tenant's id (the API, a task) or a comma-separated list of them (a
# staff user limited to some tenants on the admin).
POLICY = (
    f"tenant_id = ANY ((SELECT string_to_array(nullif(current_setting('{TENANT}', true), ''), ','))::bigint[])"
    f" OR (SELECT current_setting('{SCOPE}', true)) = '{ALL}'"
)
KEY_LOOKUP_POLICY = f"key_hash = (SELECT nullif(current_setting('{API_KEY_HASH}', true), ''))"

logger = logging.getLogger(__name__)
DOCS = 'docs/operations.md "Database roles, tenant isolation, migrations"'


def _is_postgres(using: str) -> bool:
    return bool(connections[using].vendor == "postgresql")


def _write(values: tuple[str, str, str], *, using: str, connect: bool = True) -> None:
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    if connection.connection is None:
        if not connect:
            return  # a new connection starts with nothing set
        connection.ensure_connection()
    try:
        # Django's wrapper turns the driver's errors into Django's (a server that went away is an
        # ``OperationalError``: the API's 503, not a 500).
        with connection.wrap_database_errors, connection.connection.cursor() as cursor:
            cursor.execute(_SET, values)
    except Exception:
        # A connection whose settings are unknown must not serve another query.
        connection.close()
        if values == _CLEAR:
            return  # clearing: a closed connection is cleared (the next one starts with nothing)
        raise
    # Cleared outside a transaction (so no rollback can bring the old values back): this very
    # driver connection is known to hold nothing until the next write here.
    durable = values == _CLEAR and connection.get_autocommit() and not connection.in_atomic_block
    setattr(connection, "timeline_cleared", connection.connection if durable else None)  # noqa: B010


def _known_clear(connection: Any) -> bool:
    """This Django connection's driver connection holds no tenant setting: cleared durably by
    ``_write`` (and nothing written since), or opened after that."""
    return connection.connection is not None and getattr(connection, "timeline_cleared", None) is (
        connection.connection
    )


def _read(*, using: str) -> tuple[str, str, str]:
    connection = connections[using]
    if connection.vendor != "postgresql" or connection.connection is None:
        return ("", "", "")
    with connection.connection.cursor() as cursor:
        cursor.execute(_READ)
        row = cursor.fetchone()
    return (str(row[0]), str(row[1]), str(row[2]))


def scope_clear(*, using: str = DEFAULT_DB_ALIAS, unless_known_clear: bool = False) -> None:
    """Nothing set: the session sees no tenant's row. ``unless_known_clear``: no round trip when
    this process cleared the same driver connection last, outside a transaction, and wrote
    nothing since (the previous request's end on a persistent connection)."""
    if unless_known_clear and _known_clear(connections[using]):
        return
    _write(_CLEAR, using=using, connect=False)


def tenant_set(tenant_id: int | None, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The session sees ``tenant_id``'s rows only (none for ``None``)."""
    _write(("" if tenant_id is None else str(int(tenant_id)), "", ""), using=using)


def tenants_set(tenant_ids: list[int], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The session sees the rows of these tenants only (none for an empty list)."""
    _write((",".join(str(int(pk)) for pk in tenant_ids), "", ""), using=using)


def api_key_lookup_scope(key_hash: str, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The session sees the one API key row with this hash (the caller presented its key) and no
    tenant's row: what authentication needs before it knows the tenant."""
    _write(("", "", key_hash), using=using)


def key_row_claims_tenant_sql(tenant_column: str) -> str:
    """A select-list expression for the API key lookup (PostgreSQL): evaluated for the one key row
    the lookup returns (the row the key-lookup policy showed), it sets the session to that row's
    tenant and forgets the key hash: ``tenant_set`` in the lookup's own statement, one round trip
    fewer per request (issue 38). No row, nothing evaluated: the session keeps no tenant."""
    return (
        f"set_config('{TENANT}', ({tenant_column})::text, false)"
        f" || set_config('{SCOPE}', '', false) || set_config('{API_KEY_HASH}', '', false)"
    )


def note_tenant_set(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """A statement outside this module set the tenant (``key_row_claims_tenant_sql``): the
    connection is no longer known to be clear."""
    setattr(connections[using], "timeline_cleared", None)  # noqa: B010


@contextmanager
def tenant_scope(tenant_id: int | None, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Run the block as ``tenant_id`` (a Celery task on its timeline's tenant); what was set
    before comes back after."""
    before = _read(using=using)
    tenant_set(tenant_id, using=using)
    try:
        yield
    finally:
        _write(before, using=using, connect=False)


@contextmanager
def tenant_scope_all(*, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Every tenant's rows: trusted paths only (the beat sweep, retention, render-history trim,
    management commands, the admin for staff users). What was set before comes back after."""
    before = _read(using=using)
    _write(("", ALL, ""), using=using)
    try:
        yield
    finally:
        _write(before, using=using, connect=False)


def scope_all_set(*, using: str = DEFAULT_DB_ALIAS) -> None:
    _write(("", ALL, ""), using=using)


def clear_when_request_finishes(**kwargs: Any) -> None:
    """``request_finished``: the response (a streamed one included) is closed."""
    for connection in connections.all(initialized_only=True):
        scope_clear(using=connection.alias)


def widen_for_migrations(using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """``pre_migrate``: migrations (data migrations, the backfill of 0015) see every tenant."""
    if _is_postgres(using):
        scope_all_set(using=using)


def clear_after_migrations(using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    if _is_postgres(using):
        scope_clear(using=using)


class TenantScopeMiddleware:
    """Clears the tenant settings as a request starts; widens to every tenant for staff users on
    the admin. Place it after ``AuthenticationMiddleware``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        # The previous request on this connection cleared it as it finished (``request_finished``):
        # then there is nothing to clear (one round trip fewer per request, issue 38).
        scope_clear(unless_known_clear=True)
        if request.path.startswith("/admin/"):
            user = getattr(request, "user", None)
            if user is not None and user.is_authenticated and user.is_active and user.is_staff:
                tenant_ids = staff_tenant_ids(user=user)
                if tenant_ids is None:
                    scope_all_set()
                else:
                    tenants_set(tenant_ids)
        return self.get_response(request)


def staff_tenant_ids(*, user: Any) -> list[int] | None:
    """The tenants a staff user may see in the admin (``Tenant.staff_users``): ``None`` for all of
    them (superusers, and staff users listed on no tenant), else the ids of the tenants listing
    the user. One query per request: kept on the request's user object (the admin's selectors read
    the same answer)."""
    if not getattr(user, "is_authenticated", False):
        return []
    if user.is_superuser:
        return None
    if not hasattr(user, "_timeline_tenant_ids"):
        ids = list(user.admin_tenants.values_list("pk", flat=True))
        user._timeline_tenant_ids = ids or None
    cached: list[int] | None = user._timeline_tenant_ids
    return cached


def policy_sql(table: str, *, key_lookup: bool = False) -> list[str]:
    """The statements that put ``table`` under the tenant policy (``RowLevelSecurity``)."""
    statements = [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY {POLICY_NAME} ON {table} USING ({POLICY}) WITH CHECK ({POLICY})",
    ]
    if key_lookup:
        statements.append(
            f"CREATE POLICY {KEY_LOOKUP_POLICY_NAME} ON {table} FOR SELECT USING ({KEY_LOOKUP_POLICY})"
        )
    return statements


def unpolicy_sql(table: str, *, key_lookup: bool = False) -> list[str]:
    statements = [f"DROP POLICY IF EXISTS {POLICY_NAME} ON {table}"]
    if key_lookup:
        statements.append(f"DROP POLICY IF EXISTS {KEY_LOOKUP_POLICY_NAME} ON {table}")
    return [
        *statements,
        f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
    ]


class RowLevelSecurity(Operation):
    """Migration operation: ``table`` (which has a ``tenant_id`` column) under the tenant policy on
    PostgreSQL; nothing on SQLite. A new tenant-owned table needs this one line in its migration
    (``tests/rls/test_every_tenant_table_has_the_policy.py`` fails until it has it)."""

    reduces_to_sql = True
    reversible = True

    def __init__(self, table: str, *, key_lookup: bool = False) -> None:
        self.table = table
        self.key_lookup = key_lookup

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs = {"key_lookup": True} if self.key_lookup else {}
        return (self.__class__.__name__, [self.table], kwargs)

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for statement in policy_sql(self.table, key_lookup=self.key_lookup):
                schema_editor.execute(statement)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for statement in unpolicy_sql(self.table, key_lookup=self.key_lookup):
                schema_editor.execute(statement)

    def describe(self) -> str:
        return f"Row-level security on {self.table}"


_BYPASS_SQL = "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"


def role_bypassing_policies(connection: Any) -> str | None:
    """The role this PostgreSQL connection runs as, if it skips row-level security (a superuser or
    ``BYPASSRLS``); ``None`` when the policies apply to it. One catalog query."""
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        cursor.execute(_BYPASS_SQL)
        row = cursor.fetchone()
    if row is None or not (row[1] or row[2]):
        return None
    return f"{row[0]} ({'superuser' if row[1] else 'BYPASSRLS'})"


def bypass_message(role: str) -> str:
    return (
        f"PostgreSQL role {role} skips row-level security: tenant isolation rests on the "
        f"application's filters alone. Connect as a role that is neither superuser nor BYPASSRLS "
        f"({DOCS})."
    )


_bypass_checked = False
_bypass_lock = threading.Lock()


def warn_if_policies_bypassed(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created``: at the process's first PostgreSQL connection, one query; a WARNING
    naming the role if the policies do not apply to it. Never again in this process."""
    global _bypass_checked
    if _bypass_checked or connection.vendor != "postgresql":
        return
    with _bypass_lock:
        if _bypass_checked:
            return
        _bypass_checked = True
    try:
        role = role_bypassing_policies(connection)
    except DatabaseError:
        return  # the query that follows reports a broken connection itself
    if role is not None:
        logger.warning(bypass_message(role))


def check_role_is_subject_to_policies(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check --deploy``: the default database's role must not skip the policies
    (nothing to say when the database cannot be reached)."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        return []
    try:
        role = role_bypassing_policies(connection)
    except DatabaseError:
        # No database to ask (a build step): the first connection of each process still warns.
        return []
    if role is None:
        return []
    return [checks.Warning(bypass_message(role), hint=f"See {DOCS}.", id="timeline.W001")]
