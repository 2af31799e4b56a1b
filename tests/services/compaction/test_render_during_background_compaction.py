"""A render while a background compaction is running: as is under the hard ceiling (no wait);
over it, wait for the running compaction (bounded) or compact — never more than max_tokens."""

from __future__ import annotations

import threading
import time

import pytest
from django.conf import settings
from django.utils import timezone

from tests.factories import fill_to
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import background_settings, compaction_run
from timeline_app.services.compaction import run as compaction_services
from timeline_app.services.render import timeline_render

from .helpers import in_thread, make_timeline, needs_concurrent_db
from .summarizers import BlockingSummarizer

pytestmark = pytest.mark.django_db(transaction=True)

MAX = 5_000  # helpers.SMALL: the render compacts above 4,500


def start_background(timeline: Timeline) -> tuple[BlockingSummarizer, threading.Thread, dict]:
    summarizer = BlockingSummarizer()
    thread, box = in_thread(
        lambda: compaction_run(
            timeline=timeline,
            settings=background_settings(
                timeline_settings(timeline=timeline), soft_threshold=settings.TIMELINE_SOFT_THRESHOLD
            ),
            trigger="background",
            summarizer=summarizer,
        )
    )
    assert summarizer.entered.wait(10), box.get("error")
    return summarizer, thread, box


def render(timeline: Timeline):
    started = time.monotonic()
    outcome = timeline_render(
        timeline=Timeline.objects.get(pk=timeline.pk), options=RenderOptions(format="text")
    )
    return outcome, time.monotonic() - started


@pytest.fixture(autouse=True)
def bounded_wait(monkeypatch):
    monkeypatch.setattr(compaction_services, "RENDER_WAIT_SECONDS", 5.0)


def test_under_the_ceiling_the_render_does_not_wait_and_renders_as_is():
    timeline = make_timeline()
    visible = fill_to(timeline, 4_550, MAX)  # over the render's threshold, under max_tokens
    summarizer, thread, box = start_background(timeline)

    outcome, waited = render(timeline)
    summarizer.release.set()
    thread.join(30)

    assert waited < 2.0
    assert outcome.compaction is None
    assert outcome.rendered.tokens["visible"] == visible <= MAX
    assert box["result"].status == "applied", "the background compaction went on undisturbed"
    assert Compaction.objects.filter(status="applied").count() == 1


@needs_concurrent_db
def test_over_the_ceiling_the_render_waits_for_the_running_compaction_and_uses_its_summary():
    timeline = make_timeline()
    fill_to(timeline, MAX)
    summarizer, thread, _ = start_background(timeline)
    timer = threading.Timer(0.4, summarizer.release.set)
    timer.start()

    outcome, waited = render(timeline)
    thread.join(30)

    assert 0.4 <= waited < 5.0
    assert outcome.rendered.tokens["total"] <= MAX
    assert outcome.compaction is None, "the render did not compact by itself"
    assert "[CONVERSATION SUMMARY]" in outcome.rendered.debug, "rendered with the background's summary"
    applied = Compaction.objects.get(status="applied")
    assert applied.trigger == "background"
    assert Block.objects.filter(timeline=timeline, type=b.SUMMARY).count() == 1


def test_over_the_ceiling_a_claim_nobody_finishes_makes_the_render_wait_bounded_then_compact(monkeypatch):
    monkeypatch.setattr(compaction_services, "RENDER_WAIT_SECONDS", 0.3)
    timeline = make_timeline()
    fill_to(timeline, MAX)
    dead = Compaction.objects.create(
        timeline=timeline, trigger="background", task_id="t", started_at=timezone.now()
    )

    outcome, waited = render(timeline)

    assert 0.3 <= waited < 3.0
    assert outcome.rendered.tokens["total"] <= MAX
    assert outcome.compaction is not None
    assert Compaction.objects.get(status="applied").trigger == "render"
    dead.refresh_from_db()
    assert dead.status == "running", "the render does not steal the claim; its apply check suffices"


def test_over_the_ceiling_a_slow_background_run_and_the_render_apply_once():
    timeline = make_timeline()
    fill_to(timeline, MAX)
    slow, thread, box = start_background(timeline)
    compaction_services.RENDER_WAIT_SECONDS = 0.3  # restored by the fixture's monkeypatch

    outcome, _ = render(timeline)
    slow.release.set()
    thread.join(30)

    assert outcome.rendered.tokens["total"] <= MAX
    assert outcome.compaction is not None
    assert box["result"].status == "skipped", "planned before the render's summary: superseded"
    assert Block.objects.filter(timeline=timeline, type=b.SUMMARY).count() == 1
    assert sorted(Compaction.objects.values_list("trigger", "status")) == [
        ("background", "skipped"),
        ("render", "applied"),
    ]
