"""The cost panel of the conversation page (totals, forecast vs actual chart, unexplained misses
linked to the first changed block), the cost columns of the list, and the tenant usage CSV."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.admin import urls
from tests.admin.builders import compacted_conversation, reported_usage
from timeline_app.models import RenderUsage, Tenant

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def reported(tenant):
    conversation, timeline = compacted_conversation(tenant, turns=8)
    ids = reported_usage(timeline, start=START)
    return conversation, timeline, ids


def test_the_panel_shows_cost_savings_share_and_marks_the_miss(support, reported):
    conversation, _, _ = reported
    rows = list(RenderUsage.objects.order_by("rendered_at"))
    assert [r.unexplained_miss for r in rows] == [False, False, True]
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    cost = sum(r.cost_usd for r in rows)
    assert f"${format(cost.normalize(), 'f')}" in html
    assert 'id="tl-miss-count">1<' in html
    assert html.count('<g class="tl-usage-bar') == 3
    assert html.count("tl-usage-miss") == 1
    # The miss links to the block list narrowed to the render's first changed block.
    assert 'class="tl-miss-link"' in html and "/admin/timeline_app/block/" in html


def test_the_panel_says_when_nothing_was_reported(support, tenant):
    conversation, _ = compacted_conversation(tenant, turns=3)
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    assert "No usage reported yet" in html


def test_the_list_shows_cost_and_cache_read_share_and_sorts_by_them(support, reported, tenant):
    compacted_conversation(tenant, public_id="quiet", turns=2)
    page = support.get(urls.changelist("conversation"))
    html = page.content.decode()
    assert "column-cost" in html and "column-cache_read_share" in html
    rows = list(RenderUsage.objects.all())
    share = sum(r.cache_read_tokens for r in rows) / sum(r.input_tokens for r in rows)
    assert f"{100 * share:.1f} %" in html
    cost = format(sum(r.cost_usd for r in rows).quantize(Decimal("0.0001")), "f")
    assert f'<td class="field-cost">{cost}</td>' in html
    for column in ("8", "-8", "9", "-9"):  # the cost and share columns, both ways
        ordered = support.get(urls.changelist("conversation") + f"?o={column}")
        assert ordered.status_code == 200 and "quiet" in ordered.content.decode()


def test_the_usage_csv_lists_one_tenants_renders_in_the_range(operator, support, reported):
    conversation, _, ids = reported
    other = Tenant.objects.create(name="globex")
    _, their_timeline = compacted_conversation(other, public_id=conversation.public_id, turns=4)
    reported_usage(their_timeline, start=START)
    url = "/admin/timeline_app/conversation/usage.csv"
    assert support.get(url, {"tenant": "acme"}).status_code == 403
    body = operator.get(url, {"tenant": "acme", "since": "2026-03-01", "until": "2026-03-02"})
    assert body.status_code == 200 and body["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body.content.decode())))
    assert [row["render_id"] for row in rows] == ids
    assert {row["conversation"] for row in rows} == {conversation.public_id}
    assert rows[2]["unexplained_miss"] == "1" and rows[2]["cache_miss_reason"] == "system_changed"
    later = operator.get(url, {"tenant": "acme", "since": "2026-03-02"})
    assert list(csv.DictReader(io.StringIO(later.content.decode()))) == []
    assert operator.get(url, {"tenant": "acme", "since": "March"}).status_code == 400
    assert operator.get(url, {"tenant": "nobody"}).status_code == 400
