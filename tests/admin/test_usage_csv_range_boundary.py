"""The tenant usage CSV's range is ``[since, until)`` at its boundary: a render at exactly
midnight of ``until`` is left out there and counted once, in the range that starts that day;
another tenant's renders at the same instants never appear (issue 30)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from tests.admin.builders import compacted_conversation
from timeline_app.models import Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.render import timeline_render
from timeline_app.services.usage import render_usage_report

URL = "/admin/timeline_app/conversation/usage.csv"
MARCH_2 = datetime(2026, 3, 2, tzinfo=UTC)
INSTANTS = [
    datetime(2026, 3, 1, tzinfo=UTC),
    MARCH_2 - timedelta(microseconds=1),
    MARCH_2,
    MARCH_2 + timedelta(hours=12),
]


def report_at(timeline: Timeline, now: datetime) -> str:
    outcome = timeline_render(timeline=timeline, options=RenderOptions(format="anthropic"), now=now)
    usage = {"input_tokens": 1_000, "output_tokens": 10, "cache_read_input_tokens": 0}
    render_usage_report(
        timeline=timeline,
        render_id=outcome.render_id,
        body={"usage": usage, "model": "claude-sonnet-4-5"},
        now=now,
    )
    return outcome.render_id


def rows(operator, **window: str) -> list[dict[str, str]]:
    response = operator.get(URL, {"tenant": "acme", **window})
    assert response.status_code == 200, response.content
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.django_db
def test_a_render_at_exactly_until_is_counted_once_in_the_next_range(operator, tenant):
    conversation, timeline = compacted_conversation(tenant, turns=3)
    ids = [report_at(timeline, instant) for instant in INSTANTS]
    other = Tenant.objects.create(name="globex")
    _, theirs = compacted_conversation(other, public_id=conversation.public_id, turns=3)
    for instant in INSTANTS:
        report_at(theirs, instant)

    first = rows(operator, since="2026-03-01", until="2026-03-02")
    second = rows(operator, since="2026-03-02", until="2026-03-03")

    assert [row["render_id"] for row in first] == ids[:2]  # since included, until left out
    assert [row["render_id"] for row in second] == ids[2:]
    assert [row["render_id"] for row in rows(operator, since="2026-03-01", until="2026-03-03")] == ids
    assert [row["render_id"] for row in rows(operator, until="2026-03-02")] == ids[:2]
    assert [row["render_id"] for row in rows(operator, since="2026-03-02")] == ids[2:]
