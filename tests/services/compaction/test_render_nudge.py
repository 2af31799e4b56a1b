"""A render that finds its window past the soft threshold queues a background compaction at once
(services.compaction.nudge.compaction_nudge), once per timeline per NUDGE_SECONDS; the sweep remains.
The broker is the boundary: the compact task's ``apply_async`` is replaced by a recorder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from celery import current_app
from django.core.cache import cache

from tests.api.outages import UNREACHABLE_REDIS
from tests.factories import fill_to
from timeline_app import selectors
from timeline_app.models import Compaction
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import COMPACT_TASK, NUDGE_SECONDS, compaction_run
from timeline_app.services.render import timeline_render, timeline_render_preview

from .helpers import background_compaction, make_timeline

pytestmark = pytest.mark.django_db
OPTIONS = RenderOptions(format="anthropic")


@pytest.fixture
def queued(monkeypatch, settings) -> list[tuple]:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    calls: list[tuple] = []
    task = current_app.tasks[COMPACT_TASK]
    monkeypatch.setattr(task, "apply_async", lambda args, **kw: calls.append((args, kw)))
    return calls


def test_a_render_past_the_soft_threshold_queues_one_background_compaction(queued):
    timeline = make_timeline(public_id="busy")
    fill_to(timeline, 3_800, 4_400)  # past 0.75 x 5,000, below 0.9 x 5,000
    outcome = timeline_render(timeline=timeline, options=OPTIONS)
    assert outcome.compaction is None  # nothing compacted inline
    assert queued == [
        ((timeline.pk, Compaction.Trigger.BACKGROUND, False), {"expires": NUDGE_SECONDS, "retry": False})
    ]
    timeline_render(timeline=timeline, options=OPTIONS)
    assert len(queued) == 1  # the next renders within NUDGE_SECONDS queue nothing more


def test_each_timeline_is_nudged_for_itself(queued):
    first, second = make_timeline(public_id="first"), make_timeline(public_id="second")
    for timeline in (first, second):
        fill_to(timeline, 3_800, 4_400)
        timeline_render(timeline=timeline, options=OPTIONS)
    assert [args[0] for args, _ in queued] == [first.pk, second.pk]


def test_no_nudge_below_the_soft_threshold_in_a_dry_run_or_past_the_hard_one(queued):
    below = make_timeline(public_id="below")
    fill_to(below, 3_000, 3_700)
    timeline_render(timeline=below, options=OPTIONS)
    busy = make_timeline(public_id="preview")
    fill_to(busy, 3_800, 4_400)
    timeline_render_preview(timeline=busy, options=OPTIONS)
    assert queued == []
    full = make_timeline(public_id="full")
    fill_to(full, 4_600, 5_500)
    outcome = timeline_render(timeline=full, options=OPTIONS)
    assert outcome.compaction is not None  # compacted inline: nothing left to queue
    assert queued == []


def test_no_nudge_with_eager_tasks(queued, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded mode: it would run inside the render
    timeline = make_timeline(public_id="embedded")
    fill_to(timeline, 3_800, 4_400)
    timeline_render(timeline=timeline, options=OPTIONS)
    assert queued == []


def test_a_broker_that_refuses_the_task_costs_the_render_nothing(monkeypatch, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    task = current_app.tasks[COMPACT_TASK]

    def down(*args, **kw):
        raise ConnectionRefusedError("redis is down")

    monkeypatch.setattr(task, "apply_async", down)
    timeline = make_timeline(public_id="nobroker")
    fill_to(timeline, 3_800, 4_400)
    outcome = timeline_render(timeline=timeline, options=OPTIONS)
    assert outcome.rendered.blocks and outcome.compaction is None
    assert selectors.visible_window(timeline=timeline)


def test_a_timeline_that_fills_up_again_after_a_compaction_is_nudged_again_at_once(queued):
    # Within NUDGE_SECONDS of the first nudge: the dedupe is per compaction state, not per timeline.
    timeline = make_timeline(public_id="refill")
    fill_to(timeline, 3_800, 4_400)
    timeline_render(timeline=timeline, options=OPTIONS)
    assert len(queued) == 1
    outcome = compaction_run(
        timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="background", force=True
    )
    assert outcome.status == Compaction.Outcome.APPLIED
    fill_to(timeline, 3_800, 4_400)
    timeline_render(timeline=timeline, options=OPTIONS)
    assert len(queued) == 2


def test_an_unreachable_cache_costs_the_render_nothing(queued, settings):
    # Redis (the cache holding the nudge's dedupe key) down: no nudge, no error (issue 20.5).
    settings.CACHES = {"default": {**UNREACHABLE_REDIS}}
    timeline = make_timeline(public_id="nocache")
    fill_to(timeline, 3_800, 4_400)
    outcome = timeline_render(timeline=timeline, options=OPTIONS)
    assert outcome.rendered.blocks and outcome.compaction is None
    assert queued == []


def test_a_rejected_timeline_is_nudged_again_only_once_it_grew_by_a_twentieth_of_max_tokens(queued):
    timeline = make_timeline(public_id="hopeless")  # max_tokens 5,000: 250 tokens of growth
    before = fill_to(timeline, 3_760, 4_000)
    background_compaction(timeline, status="rejected", before_tokens=before)
    # Another timeline's later, applied compaction: read without the timeline filter, it would
    # make this one look compacted since and nudge it at once.
    background_compaction(make_timeline(public_id="elsewhere"), status="applied", before_tokens=before)
    timeline_render(timeline=timeline, options=OPTIONS)
    assert queued == [], "it would only be rejected again"
    cache.clear()  # past NUDGE_SECONDS
    fill_to(timeline, before + 250, 4_500)  # still under the hard threshold: no inline compaction
    timeline_render(timeline=timeline, options=OPTIONS)
    assert [args[0] for args, _ in queued] == [timeline.pk]


def test_nudges_count_against_a_per_tenant_budget(queued, settings):
    settings.TIMELINE_NUDGE_THROTTLE = "2/min"
    mine = [make_timeline(tenant="acme", public_id=f"busy{n}") for n in range(3)]
    theirs = make_timeline(tenant="globex", public_id="busy0")
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, 5, tzinfo=UTC), tick=False):
        for timeline in [*mine, theirs]:
            fill_to(timeline, 3_800, 4_400)
            timeline_render(timeline=timeline, options=OPTIONS)
        assert [args[0] for args, _ in queued] == [mine[0].pk, mine[1].pk, theirs.pk]
    with time_machine.travel(datetime(2026, 3, 1, 12, 1, 5, tzinfo=UTC), tick=False):
        cache.clear()  # the per-timeline dedupe gone too; a new minute: a new budget
        timeline_render(timeline=mine[2], options=OPTIONS)
        assert [args[0] for args, _ in queued][-1] == mine[2].pk
