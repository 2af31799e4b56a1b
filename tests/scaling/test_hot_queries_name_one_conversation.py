"""Every query of the append, render and compaction paths names one timeline or conversation
(docs/scaling.md): with the tables distributed by conversation, each is routed to one shard."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import add_turns
from timeline_app.models import Timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
# Would be distributed by conversation; tenants and API keys would be reference tables.
DISTRIBUTED = re.compile(r'"timeline_app_(conversation|timeline|block|compaction|source)"')
# A filter on one timeline or one conversation (by id, or by the API's tenant + public id).
ONE_CONVERSATION = re.compile(
    r'"(timeline_id|conversation_id)" (= \d+|IN \(\d+\))'
    r'|"timeline_app_(timeline|conversation)"\."id" (= \d+|IN \(\d+\))'
    r'|"timeline_app_conversation"\."public_id" = \S+ AND "timeline_app_conversation"\."tenant_id" = \d+'
    r'|"timeline_app_conversation"\."tenant_id" = \d+ AND "timeline_app_conversation"\."public_id" = \S+'
)


def statements(action: Callable[[], object]) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        action()
    return [q["sql"] for q in queries.captured_queries if DISTRIBUTED.search(q["sql"])]


def where_or_values(sql: str) -> str:
    """The part of a statement that picks its rows: the WHERE clause, or an INSERT's row."""
    if sql.startswith("INSERT"):
        columns, _, values = sql.partition(" VALUES ")
        names = re.findall(r'"(\w+)"', columns.split("(", 1)[1])
        first_row = [v.strip() for v in values.strip("() ").split(",")]
        return " AND ".join(
            f'"{n}" = {v}' for n, v in zip(names, first_row, strict=False) if n.endswith("_id")
        )
    return sql.partition(" WHERE ")[2]


def unrouted(sql_list: list[str]) -> list[str]:
    return [sql for sql in sql_list if not ONE_CONVERSATION.search(where_or_values(sql))]


def test_append_render_and_compaction_queries_each_name_one_timeline_or_conversation(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    note = {"blocks": [{"type": "react.notes", "author": "react", "text": "one more"}]}

    appended = statements(lambda: owner.post(f"{BASE}/blocks/", note))
    turned = statements(lambda: owner.post(f"{BASE}/turns/", {"prompt": "next question"}))
    rendered = statements(lambda: owner.post(f"{BASE}/render/", {"max_tokens": 3_000}))
    compacted = statements(lambda: owner.post(f"{BASE}/compact/", {"force": True, "wait": True}))

    assert rendered and any('INSERT INTO "timeline_app_compaction"' in s for s in rendered), (
        "render compacted"
    )
    assert any('UPDATE "timeline_app_compaction"' in s for s in compacted)
    for path, sql_list in {
        "append": appended,
        "turn": turned,
        "render": rendered,
        "compact": compacted,
    }.items():
        assert unrouted(sql_list) == [], f"{path}: queries that name no single timeline or conversation"
