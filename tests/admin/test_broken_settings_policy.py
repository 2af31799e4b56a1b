"""One policy for stored settings that no longer validate: each bad override is replaced by its
default, the valid ones still apply, and render, the compact task, the sweep and the admin all
read them the same way (``selectors.settings``)."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.admin import urls
from tests.factories import fill_to
from timeline_app.models import Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.compaction import timeline_compact, timelines_past_soft_threshold
from timeline_app.services.conversations import conversation_create
from timeline_app.services.render import timeline_render

BROKEN = {"max_tokens": 5_000, "threshold": 7, "retired_setting": 1}
IGNORED = {"threshold": "must be between 0.05 and 1", "retired_setting": "unknown setting"}


@pytest.fixture
def broken(db) -> Timeline:
    tenant = Tenant.objects.create(name="acme")
    conversation = conversation_create(tenant=tenant, public_id="broken", settings={"max_tokens": 5_000})
    # Written when valid; a later release narrowed a range and dropped a key (or a hand edit).
    Conversation.objects.filter(pk=conversation.pk).update(settings=BROKEN, last_activity_at=timezone.now())
    return Timeline.objects.select_related("conversation").get(conversation=conversation)


@pytest.mark.django_db
def test_render_uses_the_valid_overrides_and_says_which_were_ignored(broken, caplog):
    fill_to(broken, 500)
    with caplog.at_level(logging.WARNING, logger="timeline_app.selectors.settings"):
        first = timeline_render(timeline=broken, options=RenderOptions())
        second = timeline_render(timeline=broken, options=RenderOptions())
    for outcome in (first, second):
        assert outcome.settings.max_tokens == 5_000 and outcome.settings.threshold == 0.9
        assert outcome.ignored_settings == IGNORED
    assert len([r for r in caplog.records if "no longer valid" in r.getMessage()]) == 1


@pytest.mark.django_db
def test_sweep_and_compact_task_read_the_same_settings(broken):
    fill_to(broken, 4_000)  # past the soft limit 0.75 × 5,000
    due = list(
        timelines_past_soft_threshold(
            now=timezone.now(), active_within=timedelta(hours=1), soft_threshold=0.75
        )
    )
    assert [(load.timeline_id, load.soft_limit) for load in due] == [(broken.pk, 3_750)]
    outcome = timeline_compact(timeline_id=broken.pk, trigger=Compaction.Trigger.MANUAL, force=True)
    assert outcome.status == Compaction.Outcome.APPLIED


@pytest.mark.django_db
def test_admin_facts_show_the_settings_in_use_and_the_ignored_ones(broken, support):
    html = support.get(urls.conversation(broken.conversation_id)).content.decode()
    assert "tl-ignored-settings" in html
    assert "threshold (must be between 0.05 and 1)" in html and "retired_setting (unknown setting)" in html
    assert "5000" in html.replace(",", "").replace("\u202f", "")
