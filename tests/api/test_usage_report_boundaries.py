"""Boundaries of the documented usage rules (docs/cost.md), through HTTP: a usage report repeated
with another ``model`` or ``cache_miss_reason`` is a 409 (only the identical report is a replay),
and the tenant usage range is ``[since, until)``: a render at exactly ``until`` is counted once,
in the next range (issue 30)."""

from __future__ import annotations

import pytest

from tests.api.test_usage_reporting import anthropic_usage, render, report
from tests.factories import add_turns
from timeline_app.models import RenderUsage
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db
SONNET = "claude-sonnet-4-5"


@pytest.fixture
def warm(owner, conversation):
    add_turns(conversation.timelines.get(), 4, result_words=200)
    return conversation


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ({"model": SONNET}, {"model": "claude-sonnet-4-5-20250929"}),  # the same price, another model
        ({"model": SONNET}, {"model": "claude-haiku-4-5"}),
        ({"model": SONNET}, {"model": SONNET, "cache_miss_reason": "system_changed"}),
        ({"model": SONNET, "cache_miss_reason": "system_changed"}, {"model": SONNET}),
        (
            {"model": SONNET, "cache_miss_reason": "system_changed"},
            {"model": SONNET, "cache_miss_reason": "tools_changed"},
        ),
    ],
    ids=["dated-model", "other-model", "reason-added", "reason-dropped", "other-reason"],
)
def test_a_report_repeated_with_another_model_or_miss_reason_is_a_conflict(owner, warm, first, again):
    render_id = render(owner)["render_id"]
    usage = anthropic_usage()
    assert report(owner, render_id, usage=usage, **first).status_code == 201

    conflict = report(owner, render_id, usage=usage, **again)

    assert conflict.status_code == 409, conflict.content
    assert conflict.json()["error"]["code"] == "conflict"
    (row,) = RenderUsage.objects.all()
    assert (row.model, row.cache_miss_reason) == (first["model"], first.get("cache_miss_reason", ""))
    replay = report(owner, render_id, usage=usage, **first)
    assert replay.status_code == 200, "the identical report stays a replay"


MARCH_1 = "2026-03-01T00:00:00Z"
MARCH_2 = "2026-03-02T00:00:00Z"
MARCH_3 = "2026-03-03T00:00:00Z"


def reported_at(caller, instant: str, base: str = "/api/v1/conversations/c1") -> None:
    response = report(
        caller,
        render(caller, base=base, now=instant)["render_id"],
        base=base,
        usage=anthropic_usage(),
        model=SONNET,
    )
    assert response.status_code == 201, response.content


def renders(caller, **window: str) -> int:
    body = caller.get("/api/v1/usage/", **window).json()
    return sum(row["renders"] for row in body["results"])


def test_the_tenant_usage_range_counts_a_render_at_exactly_until_once_in_the_next_range(
    owner, outsider, warm
):
    for instant in (MARCH_1, "2026-03-01T23:59:59.999999Z", MARCH_2, "2026-03-02T12:00:00Z"):
        reported_at(owner, instant)
    theirs = conversation_create(tenant=outsider.tenant, public_id="c1")  # the same public id
    add_turns(theirs.timelines.get(), 2)
    for instant in (MARCH_1, MARCH_2):
        reported_at(outsider, instant)

    assert renders(owner, since=MARCH_1, until=MARCH_2) == 2  # since included, until left out
    assert renders(owner, since=MARCH_2, until=MARCH_3) == 2  # the render at MARCH_2 is here
    assert renders(owner, since=MARCH_1, until=MARCH_3) == 4
    assert renders(owner, until=MARCH_2) == 2 and renders(owner, since=MARCH_2) == 2
    assert renders(owner, since="2026-03-02T00:00:00.000001Z") == 1
    assert renders(outsider, since=MARCH_2, until=MARCH_3) == 1
