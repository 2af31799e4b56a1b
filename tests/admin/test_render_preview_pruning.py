"""The render preview at the moment pruning is due: a real render armed the cache clock, the TTL
has passed, the preview reports the hides it would make and stores none of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.admin import urls
from tests.admin.builders import contribute_turns
from timeline_app.models import Block, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.conversations import conversation_create
from timeline_app.services.render import timeline_render

ARMED_AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_preview_after_the_ttl_plans_hides_and_stores_none(support, tenant):
    conversation = conversation_create(
        tenant=tenant, public_id="cold", settings={"ttl_keep_recent_turns": 2, "cache_ttl_seconds": 300}
    )
    timeline = Timeline.objects.get(conversation=conversation)
    contribute_turns(timeline, turns=5)
    timeline.refresh_from_db()
    armed = timeline_render(timeline=timeline, options=RenderOptions(format="text"), now=ARMED_AT)
    assert armed.pruning_status == "armed"
    timeline.refresh_from_db()
    assert timeline.cache_last_touch_at == ARMED_AT
    hidden_before = list(Block.objects.filter(timeline=timeline, hidden=True).values_list("seq", flat=True))
    assert hidden_before == []

    with time_machine.travel(ARMED_AT + timedelta(seconds=301), tick=False):
        response = support.get(urls.render_preview(conversation.pk), {"submitted": "1"})
    assert response.status_code == 200
    outcome = response.context["outcome"]
    assert outcome.pruning_status == "pruned"
    # Turns 1-3 are older than the two kept: their tool results would be hidden.
    assert len(outcome.hidden_paths) == 3
    timeline.refresh_from_db()
    assert timeline.cache_last_touch_at == ARMED_AT
    assert not Block.objects.filter(timeline=timeline, hidden=True).exists()
