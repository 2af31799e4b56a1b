"""Bytes per stored message: our store against two baselines, measured in one run on the configured
database.

* **ours** — 2,000 messages of 500 characters appended as timeline blocks (prompts and
  completions, with path, token count and indexes), and again as OpenAI messages of a named context
  (one block each, the message kept whole in its meta);
* **plain** — an append-only table of (conversation, role, content, created_at) with its primary
  key and a (conversation, id) index: the least a message log can store;
* **rewrite** — a store that writes the whole message list again at every step, as agent
  checkpointers do (one row per step holding every message so far as JSON; a step appends
  ``PER_STEP`` messages, an agent round).

Sizes are what the database reports: ``pg_total_relation_size`` (heap, TOAST and indexes) on
PostgreSQL, ``dbstat`` pages on SQLite (the file's page growth when ``dbstat`` is missing). Our
figure is the growth of every ``timeline_app`` table; the baselines are scratch tables, dropped
afterwards. Message text is random (base64 of random bytes) so compression flatters no one.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

from django.apps import apps
from django.db import connection, transaction

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.services.blocks import blocks_append
from timeline_app.services.conversations import conversation_create, timeline_get_or_create
from timeline_app.services.messages import messages_append, parse_messages
from timeline_bench.common import scratch_tenant

MESSAGES = 2_000
CHARS = 500
PER_STEP = 10
PLAIN = "bench_plain_messages"
REWRITE = "bench_rewrite_checkpoints"


def random_text(chars: int) -> str:
    return base64.b64encode(os.urandom(chars)).decode()[:chars]


def relation_bytes(tables: Iterable[str]) -> int:
    """Bytes the database uses for ``tables`` with their indexes (and TOAST on PostgreSQL)."""
    names = list(tables)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "WHERE c.relname = ANY(%s) AND c.relkind = 'r' AND pg_table_is_visible(c.oid)",
                [names],
            )
            return int(cursor.fetchone()[0])
        if connection.vendor == "sqlite":
            marks = ",".join("%s" for _ in names)
            try:
                cursor.execute(
                    "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN "
                    f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))",
                    names,
                )
                return int(cursor.fetchone()[0])
            except Exception:  # SQLite built without dbstat: the whole file's pages
                cursor.execute("PRAGMA page_count")
                pages = int(cursor.fetchone()[0])
                cursor.execute("PRAGMA page_size")
                return pages * int(cursor.fetchone()[0])
    raise NotImplementedError(f"bench storage measures PostgreSQL and SQLite, not {connection.vendor}")


def our_tables() -> list[str]:
    return [model._meta.db_table for model in apps.get_app_config("timeline_app").get_models()]


def _messages(count: int) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": random_text(CHARS)} for i in range(count)]


@contextlib.contextmanager
def fresh_tables() -> Iterator[None]:
    """On PostgreSQL, empty copies of our tables in a scratch schema first on the search path:
    rows deleted earlier left free space in the real tables, which new rows would fill unseen."""
    if connection.vendor != "postgresql":
        yield
        return
    schema = "bench_storage"
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        cursor.execute(f"CREATE SCHEMA {schema}")
        for table in our_tables():
            cursor.execute(f"CREATE TABLE {schema}.{table} (LIKE public.{table} INCLUDING ALL)")
        cursor.execute("SHOW search_path")
        saved = cursor.fetchone()[0]
        cursor.execute(f"SET search_path TO {schema}, {saved}")
        try:
            yield
        finally:
            cursor.execute(f"SET search_path TO {saved}")
            cursor.execute(f"DROP SCHEMA {schema} CASCADE")


def measure_ours(messages: list[dict[str, str]], *, as_messages: bool) -> int:
    """Growth of our tables for ``messages`` stored as OpenAI messages of a named context, or as
    plain blocks (user prompts and completions of the block timeline)."""
    with fresh_tables(), scratch_tenant() as tenant:
        before = relation_bytes(our_tables())
        conversation = conversation_create(tenant=tenant, title="bench storage")
        timeline = timeline_get_or_create(conversation=conversation, name="main")
        for start in range(0, len(messages), PER_STEP):
            step = messages[start : start + PER_STEP]
            if as_messages:
                messages_append(timeline=timeline, messages=parse_messages(step))
            else:
                turn_id = f"turn_{start // PER_STEP}"
                blocks_append(
                    timeline=timeline,
                    blocks=[
                        NewBlock(
                            type=b.USER_PROMPT if m["role"] == "user" else b.ASSISTANT_COMPLETION,
                            author=m["role"],
                            turn_id=turn_id,
                            text=m["content"],
                        )
                        for m in step
                    ],
                )
        grown = relation_bytes(our_tables()) - before
    return grown


def _create(sql_pg: str, sql_sqlite: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql_pg if connection.vendor == "postgresql" else sql_sqlite)


def measure_plain(messages: list[dict[str, str]]) -> int:
    _create(
        f"CREATE TABLE {PLAIN} (id bigserial PRIMARY KEY, conversation_id bigint NOT NULL, "
        "role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL)",
        f"CREATE TABLE {PLAIN} (id integer PRIMARY KEY AUTOINCREMENT, conversation_id bigint NOT NULL, "
        "role text NOT NULL, content text NOT NULL, created_at text NOT NULL)",
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE INDEX {PLAIN}_conv ON {PLAIN} (conversation_id, id)")
            now = datetime.now(UTC).isoformat()
            for start in range(0, len(messages), PER_STEP):
                with transaction.atomic():
                    cursor.executemany(
                        f"INSERT INTO {PLAIN} (conversation_id, role, content, created_at) VALUES (%s, %s, %s, %s)",
                        [(1, m["role"], m["content"], now) for m in messages[start : start + PER_STEP]],
                    )
        return relation_bytes([PLAIN])
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {PLAIN}")


def measure_rewrite(messages: list[dict[str, str]]) -> tuple[int, int]:
    """Bytes, and the number of checkpoint rows written."""
    _create(
        f"CREATE TABLE {REWRITE} (id bigserial PRIMARY KEY, thread_id text NOT NULL, step integer NOT NULL, "
        "messages jsonb NOT NULL, UNIQUE (thread_id, step))",
        f"CREATE TABLE {REWRITE} (id integer PRIMARY KEY AUTOINCREMENT, thread_id text NOT NULL, "
        "step integer NOT NULL, messages text NOT NULL, UNIQUE (thread_id, step))",
    )
    try:
        steps = 0
        with connection.cursor() as cursor:
            for end in range(PER_STEP, len(messages) + PER_STEP, PER_STEP):
                with transaction.atomic():
                    cursor.execute(
                        f"INSERT INTO {REWRITE} (thread_id, step, messages) VALUES (%s, %s, %s)",
                        ["thread-1", steps, json.dumps(messages[:end])],
                    )
                steps += 1
        return relation_bytes([REWRITE]), steps
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {REWRITE}")


def run(write: Callable[[str], None], *, count: int = MESSAGES) -> None:
    messages = _messages(count)
    started = time.perf_counter()
    blocks = measure_ours(messages, as_messages=False)
    as_messages = measure_ours(messages, as_messages=True)
    plain = measure_plain(messages)
    rewrite, steps = measure_rewrite(messages)
    write(
        f"storage: {count:,} messages of {CHARS} characters on {connection.vendor}, "
        f"{PER_STEP} per step ({time.perf_counter() - started:.1f} s)"
    )
    rows = [
        ("plain append-only table", plain, ""),
        ("timeline blocks", blocks, ""),
        ("named-context messages", as_messages, "  (text + the OpenAI message in meta)"),
        ("whole list rewritten per step", rewrite, f"  ({steps} checkpoints)"),
    ]
    for label, size, note in rows:
        write(f"  {label + ':':31} {size / count:10,.0f} bytes/message  {size / plain:6.2f}x plain{note}")
