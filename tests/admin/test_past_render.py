"""Issue 25: a render history row opens the context exactly as that render returned it, rebuilt
from the append-only blocks and what the record kept (its blocks, the hidden set, the settings,
format, filters and system prompt digest); "exact" means every prefix fingerprint and the cache
points equal the recorded ones. Renders before and after a manual hide, a TTL prune and a
compaction — checked after the conversation moved on (more hides, new settings), so nothing of
today's state may leak into the past."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.admin import urls
from tests.admin.builders import compact, contribute_turns
from timeline_app.models import Conversation, RenderRecord, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.conversations import conversation_create
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db


def past_render_url(conversation: Conversation, record: RenderRecord, context: str = "main") -> str:
    url = reverse("admin:timeline_app_conversation_past_render", args=[conversation.pk, record.pk])
    return f"{url}?context={context}"


def _history(tenant: Tenant, public_id: str = "conv-past") -> tuple[Conversation, Timeline, list[str]]:
    """Renders in several formats around a manual hide, a TTL prune and a compaction; then the
    conversation moves on. Returns the pruning statuses of the renders, oldest first."""
    conversation = conversation_create(
        tenant=tenant,
        public_id=public_id,
        title="Past renders",
        settings={"max_tokens": 6000, "ttl_keep_recent_turns": 2},
    )
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    start = timezone.now() - timedelta(hours=5)
    contribute_turns(timeline, turns=3)

    def render(at: timedelta, **options) -> str:
        timeline.refresh_from_db()
        outcome = timeline_render(
            timeline=timeline,
            options=RenderOptions(**options),
            now=start + at,
            system_tokens=120,
            system_digest="digest-of-the-system-prompt",
        )
        return outcome.pruning_status

    statuses = [render(timedelta(0), format="anthropic")]
    blocks_hide(timeline=timeline, path="tc:turn_t002.tc_t002.result", replacement_text="[hidden by hand]")
    statuses.append(render(timedelta(seconds=30), format="openai"))
    contribute_turns(timeline, turns=1, start=4)
    statuses.append(render(timedelta(hours=2), format="text", include_sources=True))  # TTL prune
    compact(timeline)
    statuses.append(render(timedelta(hours=2, seconds=30), format="anthropic"))
    contribute_turns(timeline, turns=1, start=5)
    statuses.append(
        render(timedelta(hours=2, minutes=1), format="text", exclude_contributions=("react.note",))
    )
    # Later: another hide and new settings. The past renders must not see either.
    blocks_hide(timeline=timeline, path="tc:turn_t005.tc_t005.result", replacement_text="[later]")
    Conversation.objects.filter(pk=conversation.pk).update(
        settings={"max_tokens": 9000, "ttl_keep_recent_turns": 1, "cache_point_offset_rounds": 1}
    )
    return conversation, timeline, statuses


def test_every_past_render_is_rebuilt_exactly_around_hide_ttl_prune_and_compaction(support, tenant):
    conversation, timeline, statuses = _history(tenant)
    assert "pruned" in statuses[2], statuses  # the third render pruned by TTL
    records = list(RenderRecord.objects.filter(timeline=timeline).order_by("id"))
    assert len(records) == 5
    assert records[0].summary_seq is None and records[3].summary_seq is not None  # compacted between
    assert records[0].hidden_count == 0 < records[1].hidden_count < records[2].hidden_count
    for record in records:
        response = support.get(past_render_url(conversation, record))
        assert response.status_code == 200
        result = response.context["result"]
        assert result.exact, (record.pk, result.problems)
        assert result.assumed == []
        assert result.segment_count == record.segment_count
        html = response.content.decode()
        assert 'id="tl-replay-verdict">exact<' in html
    # The text of what it returned: the hidden-by-hand block's replacement in the second render, and
    # the later hide nowhere before it happened.
    second = support.get(past_render_url(conversation, records[1])).content.decode()
    assert "[hidden by hand]" in second and "[later]" not in second
    third = support.get(past_render_url(conversation, records[2])).content.decode()
    assert "sources pool" in third  # named as not reconstructed: not part of the fingerprint


def test_the_history_rows_link_to_the_past_render(support, tenant):
    conversation, timeline, _ = _history(tenant)
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    for record in RenderRecord.objects.filter(timeline=timeline):
        assert past_render_url(conversation, record).replace("&", "&amp;") in html


def test_a_render_recorded_without_inputs_says_what_it_assumed_and_whether_that_held(support, tenant):
    """Renders recorded before migration 0010 keep no inputs: replayed with today's settings, each
    format and no system digest, they are exact only if the fingerprint agrees, and say so."""
    conversation = conversation_create(tenant=tenant, public_id="conv-legacy", title="Legacy")
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=2)
    timeline_render(timeline=timeline, options=RenderOptions(format="text"))
    blocks_hide(timeline=timeline, path="tc:turn_t001.tc_t001.result", replacement_text="[x]")
    timeline.refresh_from_db()
    timeline_render(timeline=timeline, options=RenderOptions(format="openai"), system_tokens=5)
    RenderRecord.objects.filter(timeline=timeline).update(render_inputs={}, hidden_seqs=b"")
    blocks_hide(timeline=timeline, path="tc:turn_t002.tc_t002.result", replacement_text="[y]")
    plain, hidden = RenderRecord.objects.filter(timeline=timeline).order_by("id")

    result = support.get(past_render_url(conversation, plain)).context["result"]
    assert result.exact and result.options.format == "text"
    assert result.assumed == [
        "settings, format and contribution filters (today's settings, each format tried)"
    ]

    page = support.get(past_render_url(conversation, hidden))
    result = page.context["result"]
    assert not result.exact
    assert "which blocks were hidden (today's hide state assumed)" in result.assumed
    assert any("differs from segment" in problem for problem in result.problems), result.problems
    assert 'id="tl-replay-verdict">not exact<' in page.content.decode()


def test_a_render_of_another_conversation_or_context_is_not_found(support, tenant):
    conversation, _, _ = _history(tenant)
    other, other_timeline, _ = _history(tenant, public_id="conv-other")
    foreign = RenderRecord.objects.filter(timeline=other_timeline).first()
    assert support.get(past_render_url(conversation, foreign)).status_code == 404
    assert support.get(past_render_url(other, foreign)).status_code == 200
    assert support.get(past_render_url(other, foreign, context="attempt_a")).status_code == 404
