"""What one agent step sends PostgreSQL (issue 38): a warm render at most 9 statements (the issue
asks 10), an append and a turn at most 8 (it asks 9), plus two that set the tenant (the key
lookup's scope, and the clear as the request finishes; the clear as the next request starts is
skipped on a connection known clear).

Counted: every statement Django sends (``CaptureQueriesContext``: ``BEGIN`` and ``COMMIT``
included, SAVEPOINT and RELEASE inside a test's transaction), and separately every ``set_config``
the tenancy module sends through the driver's own cursor. At 17fa090 (before row-level security)
a render sent 10 and an append 11; at 48a6a57 15 (17 once a context held 200 records) and 12,
plus 4 setting statements each."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import add_turns
from tests.services.compaction.helpers import needs_concurrent_db
from timeline_app.models import RenderRecord, Timeline

BASE = "/api/v1/conversations/c1"
RENDER_MAX, APPEND_MAX = 9, 8


@pytest.fixture
def setting_statements(monkeypatch) -> Iterator[list[str]]:
    """The ``set_config`` statements sent through the driver's cursors (tenancy's own)."""
    connection.ensure_connection()
    with connection.connection.cursor() as probe:
        cursor_class = type(probe)
    sent: list[str] = []
    original = cursor_class.execute

    def execute(self, query, params=None, **kwargs):
        if str(query).startswith("SELECT set_config("):
            sent.append(str(query))
        return original(self, query, params, **kwargs)

    monkeypatch.setattr(cursor_class, "execute", execute)
    return sent


def sent_by(action: Callable[[], object], settings: list[str]) -> tuple[list[str], int]:
    settings.clear()
    with CaptureQueriesContext(connection) as captured:
        action()
    return [q["sql"] for q in captured.captured_queries], len(settings)


def tool_round(step: int) -> dict[str, object]:
    meta = {"tool_call_id": f"tc_{step}", "tool_id": "web_tools.web_search"}
    return {
        "blocks": [
            {"type": "react.tool.call", "author": "react", "turn_id": "t1", "text": '{"q": 1}', "meta": meta,
             "id": f"tc_{step}.call", "mime": "application/json"},
            {"type": "react.tool.result", "author": "tool", "turn_id": "t1", "text": "result " * 80,
             "meta": meta, "id": f"tc_{step}.result"},
        ]
    }  # fmt: skip


def one_step_each(owner, settings: list[str], step: int) -> dict[str, tuple[list[str], int]]:
    def ok(response, status=(200, 201)):
        assert response.status_code in status, response.content
        return response

    return {
        "append": sent_by(lambda: ok(owner.post(f"{BASE}/blocks/", tool_round(step))), settings),
        "render": sent_by(lambda: ok(owner.post(f"{BASE}/render/", {"system_tokens": 500})), settings),
        "turn": sent_by(lambda: ok(owner.post(f"{BASE}/turns/", {"turn_id": f"t{step}", "prompt": "go"})), settings),
    }  # fmt: skip


def describe(sql_list: list[str]) -> str:
    return "\n".join(sql[:140] for sql in sql_list)


@needs_concurrent_db
@pytest.mark.django_db(transaction=True)
def test_a_warm_render_sends_at_most_9_statements_and_an_append_8(
    owner, conversation, setting_statements, settings
):
    # Every render trims the oldest record, as at steady state (200 records, the default cap).
    settings.TIMELINE_RENDER_HISTORY_MAX = 2
    add_turns(Timeline.objects.get(conversation=conversation), 6)
    one_step_each(owner, setting_statements, 1)  # warm: a previous render, a connection cleared
    for step in (2, 3, 4):
        counts = one_step_each(owner, setting_statements, step)
        render, render_settings = counts["render"]
        assert len(render) <= RENDER_MAX, describe(render)
        for kind in ("append", "turn"):
            statements, _ = counts[kind]
            assert len(statements) <= APPEND_MAX, f"{kind}:\n{describe(statements)}"
        # The key lookup's scope and the clear as the request finished: the clear as it started
        # was skipped (the previous request left the connection clear), the tenant was set by the
        # key lookup's own statement.
        assert {kind: n for kind, (_, n) in counts.items()} == {"append": 2, "render": 2, "turn": 2}
        assert render_settings == 2
    assert RenderRecord.objects.filter(conversation=conversation).count() == 2


@needs_concurrent_db
def test_the_same_counts_as_the_application_role_under_forced_row_level_security(
    owner, conversation, _app_role, setting_statements
):
    from tests import rls_support

    add_turns(Timeline.objects.get(conversation=conversation), 6)
    with rls_support.app_role():
        one_step_each(owner, setting_statements, 1)
        counts = one_step_each(owner, setting_statements, 2)
    # Inside the test's transaction: SAVEPOINT and RELEASE where a request sends BEGIN and COMMIT,
    # and the clear as a request starts is sent (a clear inside a transaction may be rolled back).
    assert len(counts["render"][0]) <= RENDER_MAX, describe(counts["render"][0])
    assert len(counts["append"][0]) <= APPEND_MAX, describe(counts["append"][0])
    assert len(counts["turn"][0]) <= APPEND_MAX, describe(counts["turn"][0])
    assert {kind: n for kind, (_, n) in counts.items()} == {"append": 3, "render": 3, "turn": 3}
