"""Issue 12.11: render's `system` has a size cap; the text format returns its text once unless
`debug` is asked for; the admin render preview caps its size."""

from __future__ import annotations

import pytest

from timeline_app.models import Block, Timeline

from .hostile import C, assert_error, assert_still_readable

pytestmark = pytest.mark.django_db


def test_render_system_over_the_text_limit_is_a_400_and_touches_nothing(owner, conversation, settings):
    settings.TIMELINE_MAX_BLOCK_TEXT_CHARS = 1_000
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "hi"})
    error = assert_error(owner.post(f"{C}/c1/render/", {"system": "x" * 1_001}), 400)
    assert "system" in error["details"]
    assert Timeline.objects.get(conversation=conversation).cache_last_touch_at is None, "no render recorded"
    assert owner.post(f"{C}/c1/render/", {"system": "x" * 1_000}).status_code == 200
    assert_still_readable(owner, "c1")


def test_text_format_returns_the_text_once_unless_debug_is_asked_for(owner, conversation):
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "a prompt worth reading"})
    plain = owner.post(f"{C}/c1/render/", {"format": "text"}).json()
    assert "debug" not in plain
    assert plain["blocks"] and "a prompt worth reading" in str(plain["blocks"])
    debug = owner.post(f"{C}/c1/render/", {"format": "text", "debug": True}).json()
    assert "a prompt worth reading" in debug["debug"] and "=>[" in debug["debug"]
    assert debug["blocks"] == plain["blocks"]
    assert_error(owner.post(f"{C}/c1/render/", {"format": "text", "debug": "yes"}), 400)


def test_admin_render_preview_caps_its_size(admin_client, owner, conversation, monkeypatch):
    from timeline_app.admin import presenters

    monkeypatch.setattr(presenters, "PREVIEW_MAX_CHARS", 2_000)
    timeline = Timeline.objects.get(conversation=conversation)
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "start " + "word " * 5_000 + "THE-END"})
    assert Block.objects.filter(timeline=timeline).count() == 2
    response = admin_client.get(f"/admin/timeline_app/conversation/{conversation.pk}/render/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "THE-END" not in page
    assert "more characters not shown" in page
    assert len(page) < 60_000
