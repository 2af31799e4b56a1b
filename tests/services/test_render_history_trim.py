"""The render history is bounded at write time: each render trims its own timeline's records to
``TIMELINE_RENDER_HISTORY_MAX`` in the transaction that inserts it, and never touches another
timeline's (another context, another conversation, another tenant)."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import add_turns
from timeline_app.models import RenderRecord, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.contexts import context_create
from timeline_app.services.conversations import conversation_create
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def renders(timeline: Timeline, count: int, *, start: datetime) -> None:
    for second in range(count):
        timeline_render(timeline=timeline, options=RenderOptions(), now=start + timedelta(seconds=second))


def kept(timeline: Timeline) -> list[datetime]:
    return list(
        RenderRecord.objects.filter(timeline=timeline).order_by("id").values_list("rendered_at", flat=True)
    )


def test_a_busy_timeline_is_trimmed_at_write_and_a_quiet_one_keeps_every_record(
    settings, timeline, make_caller
):
    settings.TIMELINE_RENDER_HISTORY_MAX = 3
    add_turns(timeline, 1)
    # Older and quieter: fewer records than the cap, all written before the busy timeline's.
    quiet = context_create(conversation=timeline.conversation, name="attempt_a")
    add_turns(quiet, 1)
    renders(quiet, 2, start=T0 - timedelta(hours=1))
    other_tenant = make_caller("globex").tenant
    foreign = conversation_create(tenant=other_tenant, public_id="c1").timelines.get()
    add_turns(foreign, 1)
    renders(foreign, 2, start=T0 - timedelta(hours=2))

    renders(timeline, 7, start=T0)

    assert kept(timeline) == [T0 + timedelta(seconds=s) for s in (4, 5, 6)], "the newest three"
    assert kept(quiet) == [T0 - timedelta(hours=1) + timedelta(seconds=s) for s in (0, 1)]
    assert kept(foreign) == [T0 - timedelta(hours=2) + timedelta(seconds=s) for s in (0, 1)]


def test_the_count_never_passes_the_cap_between_beat_runs(settings, timeline):
    settings.TIMELINE_RENDER_HISTORY_MAX = 2
    add_turns(timeline, 1)
    counts = []
    for second in range(5):
        renders(timeline, 1, start=T0 + timedelta(seconds=second))
        counts.append(RenderRecord.objects.filter(timeline=timeline).count())
    assert counts == [1, 2, 2, 2, 2]


def test_the_beat_trim_of_a_lowered_cap_leaves_quieter_timelines_whole(settings, timeline, make_caller):
    from timeline_app.tasks import trim_render_history

    add_turns(timeline, 1)
    quiet = context_create(conversation=timeline.conversation, name="attempt_a")
    add_turns(quiet, 1)
    renders(quiet, 2, start=T0 - timedelta(hours=1))
    foreign = conversation_create(tenant=make_caller("globex").tenant, public_id="c1").timelines.get()
    add_turns(foreign, 1)
    renders(foreign, 2, start=T0 - timedelta(hours=2))
    renders(timeline, 6, start=T0)
    settings.TIMELINE_RENDER_HISTORY_MAX = 3
    settings.TIMELINE_RENDER_HISTORY_DAYS = 10_000

    assert trim_render_history() == 3
    assert kept(timeline) == [T0 + timedelta(seconds=s) for s in (3, 4, 5)]
    assert len(kept(quiet)) == 2 and len(kept(foreign)) == 2
