"""Blocks: read-only for everyone, built for a huge table. Compactions: a read-only history with
triggers, timings, token counts, summarizer and errors."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.admin import urls
from tests.admin.builders import contribute_turns
from timeline_app.admin.admin import BlockAdmin
from timeline_app.admin.compactions import CompactionAdmin
from timeline_app.domain.contributions import NewAttachment
from timeline_app.models import Block, Compaction
from timeline_app.services.blocks import turn_start

LIST_QUERIES = 7  # with the staff user's tenant scope (one query)


@pytest.mark.django_db
def test_block_admin_is_configured_for_a_huge_table():
    model_admin = admin.site._registry[Block]
    assert isinstance(model_admin, BlockAdmin)
    assert model_admin.show_full_result_count is False
    assert model_admin.show_facets is admin.ShowFacets.NEVER
    assert model_admin.raw_id_fields == ("timeline",)
    assert "timeline__conversation" in model_admin.list_select_related
    assert not model_admin.inlines
    for model in admin.site._registry.values():
        assert all(inline.model is not Block for inline in model.inlines)


@pytest.mark.django_db
def test_block_list_query_count_does_not_grow_with_rows(support, compacted, django_assert_max_num_queries):
    _, timeline = compacted
    with CaptureQueriesContext(connection) as few:
        support.get(urls.changelist("block"), {"timeline__id__exact": timeline.pk})
    contribute_turns(timeline, turns=10, prefix="more")
    with django_assert_max_num_queries(LIST_QUERIES):
        response = support.get(urls.changelist("block"), {"timeline__id__exact": timeline.pk})
    assert len(response.context["cl"].result_list) == 100
    with CaptureQueriesContext(connection) as many:
        support.get(urls.changelist("block"), {"timeline__id__exact": timeline.pk})
    assert len(many.captured_queries) == len(few.captured_queries)


@pytest.mark.django_db
def test_block_list_finds_a_block_by_exact_path(support, compacted):
    _, timeline = compacted
    response = support.get(
        urls.changelist("block"), {"timeline__id__exact": timeline.pk, "q": "tc:turn_t003.tc_t003x0.result"}
    )
    assert [blk.path for blk in response.context["cl"].result_list] == ["tc:turn_t003.tc_t003x0.result"]
    hidden = support.get(urls.changelist("block"), {"timeline__id__exact": timeline.pk, "hidden__exact": "1"})
    assert {blk.hidden for blk in hidden.context["cl"].result_list} == {True}


@pytest.mark.django_db
def test_summary_block_page_shows_its_digest_as_tables(support, compacted):
    _, timeline = compacted
    summary = Compaction.objects.get(timeline=timeline).summary_block
    html = support.get(urls.change("block", summary.pk)).content.decode()
    assert "Hidden blocks (1)" in html and "Artifacts (4)" in html
    assert "first_retained_seq" in html  # the rest of the meta, as JSON
    assert 'name="_save"' not in html


@pytest.mark.django_db
def test_compaction_history_lists_trigger_status_timings_tokens_summarizer_and_error(support, compacted):
    conversation, timeline = compacted
    Compaction.objects.create(
        timeline=timeline,
        trigger="background",
        status="failed",
        summarizer="anthropic",
        model="claude-x",
        error="APITimeoutError: <b>overloaded</b>",
        before_tokens=5000,
        duration_ms=30000,
        started_at=timezone.now(),
        finished_at=timezone.now(),
    )
    response = support.get(urls.changelist("compaction"), {"q": conversation.public_id})
    assert response.status_code == 200
    html = response.content.decode()
    rows = list(response.context["cl"].result_list)
    assert [(c.trigger, c.status) for c in rows] == [("background", "failed"), ("manual", "applied")]
    applied = rows[1]
    for text in (
        'tl-status-failed">failed<',
        'tl-status-applied">applied<',
        "30000 ms",
        f"{applied.before_tokens} → {applied.after_tokens}",
        "extractive",
        "claude-x",
        "APITimeoutError: &lt;b&gt;overloaded&lt;/b&gt;",
    ):
        assert text in html, text
    assert CompactionAdmin.show_full_result_count is False


@pytest.mark.django_db
def test_compaction_page_is_read_only_with_digest_tables(support, compacted):
    _, timeline = compacted
    compaction = Compaction.objects.get(timeline=timeline)
    html = support.get(urls.change("compaction", compaction.pk)).content.decode()
    assert "turn_t001, turn_t002, turn_t003, turn_t004" in html
    assert "Tool outputs (4)" in html
    assert 'name="_save"' not in html


@pytest.mark.django_db
def test_block_with_binary_payload_shows_its_size_not_its_bytes(support, compacted):
    _, timeline = compacted
    turn_start(
        timeline=timeline,
        turn_id="turn_pdf",
        prompt="see file",
        attachments=[NewAttachment(name="menu.pdf", mime="application/pdf", data=b"%PDF-1.4 <script>")],
    )
    block = Block.objects.get(timeline=timeline, path="fi:turn_pdf.user.attachments/menu.pdf")
    html = support.get(urls.change("block", block.pk)).content.decode()
    assert "17 bytes (application/pdf)" in html and "%PDF" not in html


@pytest.mark.django_db
def test_a_block_page_says_what_replacement_tokens_mean_for_a_visible_block(support, compacted):
    _, timeline = compacted
    result = Block.objects.filter(timeline=timeline, type="react.tool.result", hidden=False).first()
    assert result is not None and result.replacement_tokens > 0  # stored at write: its TTL cost
    page = support.get(urls.change("block", result.pk)).content.decode()
    assert f"{result.replacement_tokens} once pruned after the cache TTL (visible now)" in page
    Block.objects.filter(pk=result.pk).update(hidden=True, replacement_text="[gone]", hidden_reason="manual")
    page = support.get(urls.change("block", result.pk)).content.decode()
    assert "once pruned after the cache TTL" not in page
