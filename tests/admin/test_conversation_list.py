"""The conversation list: its columns come from annotated subqueries (no N+1), its filters and
search work, and it never counts the whole table twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.admin import urls
from tests.admin.builders import compacted_conversation, contribute_turns, hide
from timeline_app import selectors
from timeline_app.admin.admin import ConversationAdmin
from timeline_app.admin.selectors import conversation_admin_list
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction, Conversation, Tenant, Timeline
from timeline_app.services.conversations import conversation_create, timeline_get_or_create

# session, user, the support user's two permission reads, its tenant scope, tenant filter choices,
# count, page; on PostgreSQL an unfiltered list first asks pg_class for the row estimate (one more).
LIST_QUERIES = 9


def _plain(tenant, public_id: str, *, turns: int = 2, title: str = "") -> tuple[Conversation, Timeline]:
    conversation = conversation_create(tenant=tenant, public_id=public_id, title=title or public_id)
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=turns, prefix=public_id.replace("-", ""))
    return conversation, timeline


def _listed(client, **params) -> list[str]:
    response = client.get(urls.changelist("conversation"), params)
    assert response.status_code == 200
    return [c.public_id for c in response.context["cl"].result_list]


@pytest.mark.django_db
def test_list_columns_show_turns_blocks_visible_tokens_and_compactions(support, compacted):
    conversation, timeline = compacted
    response = support.get(urls.changelist("conversation"))
    row = next(c for c in response.context["cl"].result_list if c.pk == conversation.pk)
    assert row.turn_count == 8
    assert row.block_count == Block.objects.filter(timeline__conversation=conversation).count()
    assert row.visible_tokens == selectors.timeline_visible_tokens(timeline=timeline)
    assert row.compaction_count == 1
    assert row.last_compaction_status == "applied"
    page = response.content.decode()
    for header in ("turns", "blocks", "visible", "last activity", "compactions · last"):
        assert f">{header}" in page.lower()
    assert '1 <span class="tl-status tl-status-applied">applied</span>' in page


@pytest.mark.django_db
def test_visible_tokens_annotation_matches_the_selector_in_every_shape(tenant):
    _fresh, fresh_tl = _plain(tenant, "fresh")
    _, cleared_tl = _plain(tenant, "cleared", turns=3)
    Timeline.objects.filter(pk=cleared_tl.pk).update(view_start_seq=8)
    _compacted, compacted_tl = compacted_conversation(tenant, public_id="compacted")
    _, empty_tl = _plain(tenant, "empty", turns=0)
    annotated = {c.public_id: c.visible_tokens for c in conversation_admin_list()}
    for public_id, timeline in (
        ("fresh", fresh_tl),
        ("cleared", cleared_tl),
        ("compacted", compacted_tl),
        ("empty", empty_tl),
    ):
        timeline.refresh_from_db()
        assert annotated[public_id] == selectors.timeline_visible_tokens(timeline=timeline), public_id


@pytest.mark.django_db
def test_blocks_and_turns_count_every_context_of_the_conversation(tenant):
    conversation, _timeline = _plain(tenant, "two-contexts", turns=2)
    other = timeline_get_or_create(conversation=conversation, name="attempt_a")
    contribute_turns(other, turns=1, prefix="a")
    row = conversation_admin_list().get(pk=conversation.pk)
    assert row.block_count == Block.objects.filter(timeline__conversation=conversation).count() == 18
    assert row.turn_count == 3


@pytest.mark.django_db
def test_list_query_count_is_pinned_and_does_not_grow_with_rows(
    support, tenant, django_assert_max_num_queries
):
    for n in range(2):
        _plain(tenant, f"small-{n}")
    with CaptureQueriesContext(connection) as few:
        support.get(urls.changelist("conversation"))
    for n in range(2, 25):
        _plain(tenant, f"small-{n}", turns=1)
    compacted_conversation(tenant, public_id="big")
    with django_assert_max_num_queries(LIST_QUERIES):
        response = support.get(urls.changelist("conversation"))
    assert len(response.context["cl"].result_list) == 26
    with CaptureQueriesContext(connection) as many:
        support.get(urls.changelist("conversation"))
    assert len(many.captured_queries) == len(few.captured_queries)


@pytest.mark.django_db
def test_list_never_counts_the_whole_table_next_to_the_filtered_count(support, tenant):
    assert ConversationAdmin.show_full_result_count is False
    _plain(tenant, "one")
    with CaptureQueriesContext(connection) as ctx:
        support.get(urls.changelist("conversation"), {"q": "one"})
    counts = [q["sql"] for q in ctx.captured_queries if q["sql"].upper().startswith("SELECT COUNT(")]
    assert len(counts) == 1
    # Facet counts (one COUNT per filter choice) are off, even when asked for.
    with CaptureQueriesContext(connection) as faceted:
        page = support.get(urls.changelist("conversation"), {"_facets": "1"}).content.decode()
    assert "Show counts" not in page
    assert len(faceted.captured_queries) <= LIST_QUERIES


@pytest.mark.django_db
def test_filter_by_tenant(support, tenant):

    other = Tenant.objects.create(name="globex")
    _plain(tenant, "mine")
    _plain(other, "theirs")
    assert _listed(support, tenant__id__exact=other.pk) == ["theirs"]


@pytest.mark.django_db
def test_filter_by_hidden_blocks(support, tenant):
    _, with_hidden = _plain(tenant, "with-hidden")
    hide(with_hidden, path=b.tool_result_path("turn_withhidden001", "tc_withhidden001x0"))
    _plain(tenant, "without")
    assert _listed(support, hidden_blocks="yes") == ["with-hidden"]
    assert _listed(support, hidden_blocks="no") == ["without"]


@pytest.mark.django_db
def test_filter_by_failed_compaction(support, tenant):
    _, failed_last = _plain(tenant, "failed-last")
    _, failed_before = _plain(tenant, "failed-before")
    _plain(tenant, "never")
    now = timezone.now()
    Compaction.objects.create(
        timeline=failed_last, trigger="background", status="failed", error="boom", started_at=now
    )
    Compaction.objects.create(
        timeline=failed_before, trigger="background", status="failed", error="x", started_at=now
    )
    Compaction.objects.create(timeline=failed_before, trigger="manual", status="skipped", started_at=now)
    assert _listed(support, compaction_failed="last") == ["failed-last"]
    assert sorted(_listed(support, compaction_failed="any")) == ["failed-before", "failed-last"]


@pytest.mark.django_db
def test_filter_by_recent_activity(support, tenant):
    _plain(tenant, "today")
    old, _ = _plain(tenant, "last-week")
    Conversation.objects.filter(pk=old.pk).update(last_activity_at=timezone.now() - timedelta(days=3))
    assert _listed(support, active="1d") == ["today"]
    assert sorted(_listed(support, active="7d")) == ["last-week", "today"]


@pytest.mark.django_db
def test_search_by_exact_public_id_or_title_words(support, tenant):
    _plain(tenant, "conv-aaa", title="Dinner in Wuppertal")
    _plain(tenant, "conv-bbb", title="Train tickets")
    assert _listed(support, q="conv-bbb") == ["conv-bbb"]
    assert _listed(support, q="wuppertal") == ["conv-aaa"]
    assert _listed(support, q="conv-b") == []


@pytest.mark.django_db
def test_title_with_html_is_escaped_in_the_list(support, tenant):
    _plain(tenant, "xss", title='<script>alert("t")</script>')
    page = support.get(urls.changelist("conversation")).content.decode()
    assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;" in page
    assert '<script>alert("t")' not in page


@pytest.mark.django_db
def test_no_view_site_link_leads_to_the_404_at_the_root(support):
    html = support.get(urls.changelist("conversation")).content.decode()
    assert "View site" not in html
