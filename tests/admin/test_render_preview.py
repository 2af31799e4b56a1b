"""The render preview: the text the agent would get now, cache points marked, token totals — and a
dry run: no TTL clock change, no pruning or compaction stored."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import get_args

import pytest
from django.utils import timezone

from tests.admin import urls
from tests.admin.builders import compacted_conversation, contribute_turns
from timeline_app.admin.display import PRUNING_WORDS
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.ttl import TtlStatus
from timeline_app.services.blocks import blocks_append
from timeline_app.services.conversations import timeline_get_or_create
from timeline_app.services.render import timeline_render_preview

PREVIEW_QUERIES = 11  # with the staff user's tenant scope (one query)


def _snapshot(timeline: Timeline) -> tuple:
    timeline.refresh_from_db()
    return (
        timeline.cache_last_touch_at,
        timeline.version,
        timeline.next_seq,
        list(
            Block.objects.filter(timeline=timeline)
            .order_by("seq")
            .values_list("seq", "hidden", "replacement_text")
        ),
        list(Compaction.objects.filter(timeline=timeline).values_list("id", "status")),
    )


@pytest.mark.django_db
def test_preview_shows_the_rendered_text_with_cache_marks_and_totals(support, compacted):
    conversation, timeline = compacted
    expected = timeline_render_preview(
        timeline=timeline,
        options=RenderOptions(format="text", include_sources=True, include_announce=True),
    ).rendered
    response = support.get(urls.render_preview(conversation.pk))
    assert response.status_code == 200
    html = response.content.decode()
    marks = re.findall(r"<mark>(=&gt;\[\d+\])</mark>", html)
    assert marks and len(marks) == len(expected.cache_points)
    assert "[CONVERSATION SUMMARY]" in html and "[TURN turn_t008]" in html
    assert f"<strong>{expected.tokens['total']}</strong> / {expected.tokens['max_tokens']}" in html
    assert f"<dt>Visible</dt><dd>{expected.tokens['visible']}</dd>" in html
    assert response.context["tokens"] == expected.tokens


@pytest.mark.django_db
def test_preview_persists_nothing_even_when_pruning_and_compaction_are_due(support, tenant):
    conversation, timeline = compacted_conversation(tenant, public_id="cold", turns=10)
    # The cache went cold an hour ago: a real render would prune now.
    Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=timezone.now() - timedelta(hours=1))
    before = _snapshot(timeline)
    response = support.get(
        urls.render_preview(conversation.pk), {"submitted": "1", "sources": "1", "force": "1"}
    )
    assert response.status_code == 200
    outcome = response.context["outcome"]
    assert outcome.would_compact
    assert outcome.pruning_status in {"pruned", "no_effect"}
    assert _snapshot(timeline) == before


@pytest.mark.django_db
def test_first_preview_does_not_start_the_cache_clock(support, compacted, django_assert_max_num_queries):
    conversation, timeline = compacted
    with django_assert_max_num_queries(PREVIEW_QUERIES):
        response = support.get(urls.render_preview(conversation.pk))
    assert response.context["outcome"].pruning_status == "armed"
    timeline.refresh_from_db()
    assert timeline.cache_last_touch_at is None


@pytest.mark.django_db
def test_preview_escapes_block_text(support, compacted):

    conversation, timeline = compacted
    blocks_append(
        timeline=timeline,
        blocks=[NewBlock(type=b.ASSISTANT_COMPLETION, author="assistant", text="<script>alert(1)</script>")],
    )
    html = support.get(urls.render_preview(conversation.pk)).content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.django_db
def test_preview_of_another_context(support, compacted):

    conversation, _ = compacted
    contribute_turns(timeline_get_or_create(conversation=conversation, name="attempt_a"), turns=1, prefix="a")
    html = support.get(urls.render_preview(conversation.pk, context="attempt_a")).content.decode()
    assert "[TURN turn_a001]" in html and "turn_t008" not in html
    assert support.get(urls.render_preview(conversation.pk, context="missing")).status_code == 404


def test_every_pruning_status_has_words() -> None:
    assert set(get_args(TtlStatus)) == set(PRUNING_WORDS)


@pytest.mark.django_db
def test_pruning_status_is_shown_in_words(support, compacted):
    conversation, timeline = compacted

    def shown() -> str:
        html = support.get(urls.render_preview(conversation.pk)).content.decode()
        return re.search(r'<dd class="tl-pruning">(.*?)</dd>', html, flags=re.S).group(1)

    assert shown() == PRUNING_WORDS["armed"]
    Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=timezone.now())
    assert shown() == PRUNING_WORDS["fresh"]
    Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=timezone.now() - timedelta(hours=1))
    assert shown().startswith("cache expired")
    assert shown() not in {"armed", "fresh", "no_effect", "pruned"}
