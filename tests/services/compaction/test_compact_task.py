"""The ``compact_timeline`` task body: ids in, idempotent, claims that survive a dead worker."""

from __future__ import annotations

import inspect
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import fill_to
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction
from timeline_app.services.compaction import ABANDONED, STALE_CLAIM, TAKEN_OVER
from timeline_app.tasks import compact_timeline

from .helpers import make_timeline
from .summarizers import SlowSummarizer, use

pytestmark = pytest.mark.django_db


def running_claim(timeline, *, task_id: str = "", age: timedelta = timedelta(seconds=5)) -> Compaction:
    return Compaction.objects.create(
        timeline=timeline, trigger="background", task_id=task_id, started_at=timezone.now() - age
    )


def test_the_task_is_acknowledged_late_and_takes_ids():
    assert compact_timeline.acks_late is True
    assert compact_timeline.reject_on_worker_lost is True
    assert list(inspect.signature(compact_timeline.run).parameters) == [
        "timeline_id",
        "trigger",
        "force",
        "compaction_id",
    ]


def test_a_background_run_compacts_past_the_soft_threshold_and_records_its_task_id():
    timeline = make_timeline()
    visible = fill_to(timeline, 3_800, 4_500)  # over 0.75 × 5,000, under the render's 0.9

    result = compact_timeline.apply(args=(timeline.pk,), task_id="task-bg").get()

    assert result["status"] == "applied", result
    record = Compaction.objects.get()
    assert (record.trigger, record.task_id, record.status) == ("background", "task-bg", "applied")
    assert record.before_tokens == visible
    assert selectors.timeline_visible_tokens(timeline=timeline) <= 3_750


def test_a_manual_run_without_force_uses_the_conversations_own_threshold():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    assert compact_timeline(timeline.pk, "manual", False)["status"] == "skipped"
    assert compact_timeline(timeline.pk, "manual", True)["status"] == "applied"
    # every manual attempt is a row (issue 35): the skipped one too
    rows = Compaction.objects.order_by("pk").values_list("trigger", "status")
    assert list(rows) == [("manual", "skipped"), ("manual", "applied")]


def test_running_the_task_twice_compacts_once():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    first = compact_timeline(timeline.pk)
    second = compact_timeline(timeline.pk)

    assert (first["status"], second["status"]) == ("applied", "skipped")
    assert Block.objects.filter(timeline=timeline, type=b.SUMMARY).count() == 1


def test_a_timeline_that_is_gone_is_a_no_op():
    assert compact_timeline(987_654)["status"] == "skipped"


def test_an_unknown_trigger_is_refused():
    timeline = make_timeline()
    with pytest.raises(ValueError, match="trigger"):
        compact_timeline(timeline.pk, "cron")


def test_another_run_in_flight_makes_the_task_busy():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    running_claim(timeline, task_id="task-other")

    result = compact_timeline.apply(args=(timeline.pk,), task_id="task-mine").get()

    assert result["status"] == "busy"
    assert Compaction.objects.get().status == "running", "the other run's claim is left alone"


def test_a_redelivered_task_takes_over_the_claim_its_dead_worker_left():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    dead = running_claim(timeline, task_id="task-1")

    result = compact_timeline.apply(args=(timeline.pk,), task_id="task-1").get()

    assert result["status"] == "applied"
    dead.refresh_from_db()
    assert (dead.status, dead.error) == ("failed", TAKEN_OVER)
    assert dead.finished_at is not None
    assert Compaction.objects.filter(status="applied", task_id="task-1").count() == 1


def test_a_stale_claim_is_released_for_anyone():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    stale = running_claim(timeline, age=STALE_CLAIM + timedelta(seconds=1))

    assert compact_timeline(timeline.pk)["status"] == "applied"
    stale.refresh_from_db()
    assert (stale.status, stale.error) == ("failed", ABANDONED)


def test_the_configured_custom_summarizer_is_used():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    with use(SlowSummarizer()):
        compact_timeline(timeline.pk)

    record = Compaction.objects.get()
    assert (record.summarizer, record.model) == ("slow", "slow-test")
