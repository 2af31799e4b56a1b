"""The beat sweep: which timelines passed the soft threshold, computed in the database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tests.factories import fill_to
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Conversation, Timeline
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append
from timeline_app.services.compaction import compaction_run, timelines_past_soft_threshold
from timeline_app.tasks import compact_timeline, sweep_compactions

from .helpers import background_compaction, make_timeline

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def due(*, soft: float = 0.75, within: timedelta = HOUR) -> dict[int, int]:
    loads = timelines_past_soft_threshold(now=timezone.now(), active_within=within, soft_threshold=soft)
    return {load.timeline_id: load.visible_tokens for load in loads}


def test_the_soft_threshold_defaults_to_three_quarters():
    assert settings.TIMELINE_SOFT_THRESHOLD == 0.75


def test_a_timeline_past_the_soft_threshold_is_due_and_one_under_it_is_not():
    under = make_timeline(public_id="under")
    fill_to(under, 3_000, 3_750)
    over = make_timeline(public_id="over")
    fill_to(over, 3_800, 4_500)

    assert set(due()) == {over.pk}


def test_the_visible_tokens_summed_in_the_database_match_the_visible_window():
    plain = make_timeline(public_id="plain")
    fill_to(plain, 2_000)
    compacted = make_timeline(public_id="compacted")
    fill_to(compacted, 4_600)
    compaction_run(
        timeline=compacted, settings=timeline_settings(timeline=compacted), trigger="manual", force=True
    )
    fill_to(compacted, selectors.timeline_visible_tokens(timeline=compacted) + 500)
    hidden = make_timeline(public_id="hidden")
    fill_to(hidden, 2_000)
    Block.objects.filter(timeline=hidden, type=b.TOOL_RESULT).update(
        hidden=True, replacement_text="[hidden]", replacement_tokens=3
    )
    cleared = make_timeline(public_id="cleared")
    fill_to(cleared, 4_600)
    compaction_run(
        timeline=cleared, settings=timeline_settings(timeline=cleared), trigger="manual", force=True
    )
    fill_to(cleared, selectors.timeline_visible_tokens(timeline=cleared) + 1_000)
    Timeline.objects.filter(pk=cleared.pk).update(view_start_seq=cleared.blocks.order_by("-seq")[5].seq)

    found = due(soft=0.05)  # 250 tokens of 5,000: every one of them is due

    expected = {
        t.pk: selectors.timeline_visible_tokens(timeline=Timeline.objects.get(pk=t.pk))
        for t in (plain, compacted, hidden, cleared)
    }
    assert found == expected


def test_per_conversation_settings_are_respected():
    default = make_timeline(public_id="default", settings={})  # max_tokens 200,000
    fill_to(default, 3_800)
    low_threshold = make_timeline(public_id="low", settings={"max_tokens": 10_000, "threshold": 0.3})
    fill_to(low_threshold, 3_100)  # over 0.3 × 10,000, far under 0.75 × 10,000

    assert set(due()) == {low_threshold.pk}


def test_idle_conversations_running_compactions_and_hopeless_timelines_are_left_out():
    idle = make_timeline(public_id="idle")
    fill_to(idle, 3_800)
    Conversation.objects.filter(pk=idle.conversation_id).update(last_activity_at=timezone.now() - 2 * HOUR)
    running = make_timeline(public_id="running")
    fill_to(running, 3_800)
    background_compaction(running)
    failed = make_timeline(public_id="failed")
    fill_to(failed, 3_800)
    background_compaction(failed, status="failed")

    assert due() == {}

    blocks_append(timeline=failed, blocks=[NewBlock(type=b.NOTES, text="news")])
    assert set(due()) == {failed.pk}, "new activity makes a failed one worth another try"


def test_a_rejected_timeline_is_swept_again_only_once_it_grew_by_a_twentieth_of_max_tokens():
    rejected = make_timeline(public_id="rejected")  # max_tokens 5,000: 250 tokens of growth
    before = fill_to(rejected, 3_800)
    background_compaction(rejected, status="rejected", before_tokens=before)
    # Another tenant's timeline with the same public id, rejected long ago (before_tokens 0): its
    # record is its own, and it has grown enough.
    other = make_timeline(tenant="other", public_id="rejected")
    fill_to(other, 3_800)
    background_compaction(other, status="rejected", before_tokens=0)
    assert set(due()) == {other.pk}, "grown by 3,800 since its (planted) rejection"

    blocks_append(timeline=rejected, blocks=[NewBlock(type=b.NOTES, text="news")])
    assert rejected.pk not in due(), "any activity is not enough: it would be rejected again"

    fill_to(rejected, before + 250)
    assert rejected.pk in due()


def test_finding_due_timelines_is_one_query(django_assert_num_queries):
    for n in range(4):
        fill_to(make_timeline(public_id=f"t{n}"), 3_800)
    with django_assert_num_queries(1):
        assert len(due()) == 4


def test_the_sweep_enqueues_a_background_compaction_for_each_due_timeline():
    over = make_timeline(public_id="over")
    fill_to(over, 3_800, 4_500)
    under = make_timeline(public_id="under")
    fill_to(under, 1_000)

    assert sweep_compactions() == 1  # eager in the tests: the compaction ran

    record = Compaction.objects.get()
    assert (record.timeline_id, record.trigger, record.status) == (over.pk, "background", "applied")
    assert selectors.timeline_visible_tokens(timeline=over) <= 3_750
    assert sweep_compactions() == 0, "under the soft threshold now"


def test_contexts_that_truncate_instead_of_summarizing_are_not_swept_nor_compacted():
    timeline = make_timeline(public_id="truncating")
    fill_to(timeline, 3_800, 4_500)
    Timeline.objects.filter(pk=timeline.pk).update(
        compaction_strategy={"name": "truncate_oldest", "max_messages": 10}
    )

    assert due() == {}
    assert compact_timeline(timeline.pk)["status"] == "skipped"
    assert not Compaction.objects.exists()
