"""Issue 35: compact then revert gives back the render from before the compaction, byte for byte
(blocks, cache points, tokens, the native request), over random timelines: hides, TTL prunes, an
earlier compaction, split-turn compactions, named contexts and every render format.

1,000 examples in ``make test`` (``tests/budget.py``: a fifth in ``make test-fast``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.factories import add_turn
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import compaction_revert, compaction_run
from timeline_app.services.conversations import conversation_create, timeline_get_or_create
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db
START = datetime(2026, 1, 1, tzinfo=UTC)

# One step of a timeline's history: a turn (tool calls, result words, answered), a hide of a tool
# result, a render (an hour later: the cache is cold, so it TTL-prunes), or a forced compaction.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 3), st.integers(1, 60), st.booleans()),
        st.tuples(st.just("hide"), st.integers(0, 20)),
        st.tuples(st.just("render")),
        st.tuples(st.just("compact")),
    ),
    min_size=2,
    max_size=10,
)


def seen(timeline: Timeline, fmt: str, now: datetime) -> bytes:
    timeline.refresh_from_db()
    out = timeline_render(timeline=timeline, options=RenderOptions(format=fmt), now=now).rendered
    body = {
        "blocks": out.blocks,
        "cache_points": out.cache_points,
        "tokens": out.tokens,
        "request": out.request,
    }
    return json.dumps(body, sort_keys=True).encode()


def force_compact(timeline: Timeline) -> Compaction | None:
    timeline.refresh_from_db()
    outcome = compaction_run(
        timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="manual", force=True
    )
    if outcome.status != "applied":
        return None
    return Compaction.objects.get(pk=outcome.compaction_id)


@settings(
    max_examples=examples(1_000),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=steps,
    named=st.booleans(),
    keep_recent=st.sampled_from([50, 200, 800]),  # small: the cut often splits a turn
    fmt=st.sampled_from(["anthropic", "openai", "text", "anthropic_messages", "openai_chat"]),
)
def test_compact_then_revert_renders_what_it_rendered_before(owner, history, named, keep_recent, fmt):
    conversation = conversation_create(
        tenant=owner.tenant, settings={"max_tokens": 200_000, "keep_recent_tokens": keep_recent}
    )
    timeline = timeline_get_or_create(conversation=conversation, name="attempt_a" if named else "main")
    now, number = START, 0
    for step in history:
        now += timedelta(hours=1)
        if step[0] == "turn":
            number += 1
            add_turn(timeline, number, tool_calls=step[1], result_words=step[2], complete=step[3])
        elif step[0] == "hide":
            paths = list(
                Block.objects.filter(timeline=timeline, type="react.tool.result")
                .order_by("seq")
                .values_list("path", flat=True)
            )
            if paths:
                blocks_hide(timeline=timeline, path=paths[step[1] % len(paths)], replacement_text="[gone]")
        elif step[0] == "render":
            seen(timeline, fmt, now)
        else:
            force_compact(timeline)
    add_turn(timeline, number + 1, tool_calls=1, result_words=5)
    now += timedelta(hours=1)
    before = seen(timeline, fmt, now)  # prunes what is stale; the renders below are within the TTL
    compacted = force_compact(timeline)
    if compacted is None:
        return
    compaction_revert(timeline=timeline, public_id=compacted.public_id, actor="test")
    assert seen(timeline, fmt, now + timedelta(seconds=1)) == before
