"""Helpers shared by the benchmarks: timing, a throwaway tenant, bulk-loaded timelines."""

from __future__ import annotations

import contextlib
import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.db import connection
from django.test import Client

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock, tool_call_blocks
from timeline_app.models import Block, Tenant, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_app.services.conversations import conversation_create


def median_seconds(
    action: Callable[[], object],
    *,
    repeat: int,
    warmup: int = 3,
    setup: Callable[[], object] | None = None,
) -> float:
    """The median wall time of ``action``; ``setup`` runs before each call, untimed."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        action()
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


@contextlib.contextmanager
def scratch_tenant() -> Iterator[Tenant]:
    """A tenant for one benchmark run, deleted with everything it owns afterwards."""
    tenant = Tenant.objects.create(name=f"bench-{secrets.token_hex(4)}")
    try:
        yield tenant
    finally:
        tenant.delete()


def row_level_security() -> str:
    """One line: whether the database's row-level security applies to the role this command
    connects as (docs/operations.md "Database roles"). Superusers and ``BYPASSRLS`` roles skip every
    policy, so a render timed as one of them measures none of its cost."""
    if connection.vendor != "postgresql":
        return f"row-level security: none ({connection.vendor}: the application's tenant filters only)"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_user, r.rolsuper, r.rolbypassrls, c.relrowsecurity, c.relforcerowsecurity,"
            " c.relowner = r.oid FROM pg_roles r, pg_class c"
            " WHERE r.rolname = current_user AND c.oid = %s::regclass",
            [Block._meta.db_table],
        )
        role, superuser, bypass, enabled, forced, owner = cursor.fetchone()
    if superuser or bypass:
        why = "a superuser" if superuser else "BYPASSRLS"
        return (
            f"row-level security: NOT enforced: role {role} is {why} and skips every policy "
            "(connect as the application's role to measure it)"
        )
    if not enabled or (owner and not forced):
        return f"row-level security: NOT enforced for role {role} (the block table has no forced policy)"
    return (
        f"row-level security: enforced for role {role} (no superuser, no BYPASSRLS"
        f"{', owner under FORCE' if owner else ''})"
    )


class NoAllowedHost(Exception):
    """ALLOWED_HOSTS names no host an in-process request could use."""


def in_process_host() -> str:
    """A host this deployment's ``ALLOWED_HOSTS`` accepts, for the API requests a benchmark makes in
    process: under ``make serve``'s settings (``ALLOWED_HOSTS=timeline.example.com``, no
    ``testserver``) a request to Django's test host is a 400 (issue 30, defect 5)."""
    allowed = list(settings.ALLOWED_HOSTS)
    if not allowed and settings.DEBUG:
        return "localhost"  # Django's own default with DEBUG on and ALLOWED_HOSTS empty
    for pattern in allowed:
        host = "localhost" if pattern == "*" else pattern.lstrip(".")
        if host:
            return host
    raise NoAllowedHost("ALLOWED_HOSTS is empty: no host for in-process API requests")


def in_process_base_url() -> str:
    """The base URL of in-process API requests: a host from ``ALLOWED_HOSTS`` over HTTPS, so
    ``SECURE_SSL_REDIRECT`` (production behind a TLS proxy) serves them instead of a 301."""
    return f"https://{in_process_host()}"


class InProcessClient(Client):
    """Django's test client as production settings accept it: every request over HTTPS to a host
    from ``ALLOWED_HOSTS`` (the benchmarks that drive the API in process use it)."""

    def __init__(self, **defaults: Any) -> None:
        super().__init__(HTTP_HOST=in_process_host(), **defaults)

    def generic(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["secure"] = True
        return super().generic(*args, **kwargs)


def scratch_timeline(tenant: Tenant) -> Timeline:
    conversation = conversation_create(tenant=tenant, title="benchmark")
    return Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)


def synthetic_turn(turn: int, *, tool_calls: int = 3, result_chars: int = 400) -> list[NewBlock]:
    """One realistic turn: header, prompt, notes + call + result per tool call, completion."""
    turn_id = f"turn_bench_{turn}"
    rows = [
        NewBlock(type=b.TURN_HEADER, author="system", turn_id=turn_id),
        NewBlock(type=b.USER_PROMPT, author="user", turn_id=turn_id, text=f"Request number {turn}: do it."),
    ]
    for call in range(tool_calls):
        rows += tool_call_blocks(
            turn_id=turn_id,
            tool_call_id=f"tc_{turn}_{call}",
            tool_id="web_tools.web_search",
            params={"q": "x"},
            result="result " * (result_chars // 7),
            note=f"step {call}",
            result_mime="text/plain",
        )
    rows.append(NewBlock(type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text="Done."))
    return rows


def fill_timeline(timeline: Timeline, *, blocks: int) -> None:
    """Append about ``blocks`` blocks of synthetic turns, in batches (fast: one insert per batch)."""
    turn = Block.objects.filter(timeline=timeline, type=b.TURN_HEADER).count()
    written = Block.objects.filter(timeline=timeline).count()
    batch: list[NewBlock] = []
    while written + len(batch) < blocks:
        batch += synthetic_turn(turn)
        turn += 1
        if len(batch) >= 400:
            blocks_append(timeline=timeline, blocks=batch)
            written += len(batch)
            batch = []
    if batch:
        blocks_append(timeline=timeline, blocks=batch)
