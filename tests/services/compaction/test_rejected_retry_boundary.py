"""A timeline whose latest compaction was rejected is tried again once it grew by
``REJECTED_RETRY_GROWTH × max_tokens`` (5 %, rounded up) over that attempt's ``before_tokens``:
growth of exactly 5 % triggers the retry, one token less does not, in the beat sweep and in a
render's nudge alike (issue 30). ``max_tokens`` is 5,000 here: 250 tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery import current_app
from django.utils import timezone

from compaction.planner import worth_retrying
from tests.factories import fill_to
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.compaction import COMPACT_TASK, timelines_past_soft_threshold
from timeline_app.services.render import timeline_render

from .helpers import background_compaction, make_timeline

pytestmark = pytest.mark.django_db
GROWTH = [(250, True), (249, False)]


def test_the_growth_is_five_percent_of_max_tokens_rounded_up():
    assert worth_retrying(visible_tokens=10_250, rejected_before_tokens=10_000, max_tokens=5_000)
    assert not worth_retrying(visible_tokens=10_249, rejected_before_tokens=10_000, max_tokens=5_000)
    # 5 % of 4,999 is 249.95: 250 tokens.
    assert worth_retrying(visible_tokens=10_250, rejected_before_tokens=10_000, max_tokens=4_999)
    assert not worth_retrying(visible_tokens=10_249, rejected_before_tokens=10_000, max_tokens=4_999)


def rejected_timeline(growth: int):
    """A timeline past the soft threshold whose latest compaction, rejected, saw ``growth`` tokens
    fewer than it has now; another tenant's timeline with the same public id, rejected long ago,
    is planted beside it (its record must not count for this one)."""
    timeline = make_timeline(public_id="rejected")
    visible = fill_to(timeline, 3_800, 4_400)
    background_compaction(timeline, status="rejected", before_tokens=visible - growth)
    other = make_timeline(tenant="other", public_id="rejected")
    fill_to(other, 3_800, 4_400)
    background_compaction(other, status="rejected", before_tokens=0)
    return timeline, other


@pytest.mark.parametrize(("growth", "retried"), GROWTH)
def test_the_sweep_retries_at_exactly_five_percent_growth(growth, retried):
    timeline, other = rejected_timeline(growth)

    loads = timelines_past_soft_threshold(
        now=timezone.now(), active_within=timedelta(hours=1), soft_threshold=0.75
    )

    due = {load.timeline_id for load in loads}
    assert (timeline.pk in due) is retried
    assert other.pk in due


@pytest.mark.parametrize(("growth", "retried"), GROWTH)
def test_a_render_nudges_at_exactly_five_percent_growth(monkeypatch, settings, growth, retried):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    queued: list[tuple] = []
    monkeypatch.setattr(
        current_app.tasks[COMPACT_TASK], "apply_async", lambda args, **kw: queued.append(args)
    )
    timeline, _ = rejected_timeline(growth)

    timeline_render(timeline=timeline, options=RenderOptions(format="anthropic"))

    assert [args[0] for args in queued] == ([timeline.pk] if retried else [])
