"""Issue 35: ``budget_note`` on a render, or the conversation's setting, adds the budget line to the
uncached tail; the cache report does not read it as a settings change."""

from __future__ import annotations

import pytest

from tests.factories import add_turns
from timeline_app.models import Timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"


def test_the_render_option_and_the_conversation_setting(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation, name="main"), 2)
    plain = owner.post(f"{BASE}/render/", {"format": "anthropic"}).json()
    noted = owner.post(f"{BASE}/render/", {"format": "anthropic", "budget_note": True}).json()
    total = plain["tokens"]["total"]
    note = f"[context: {total:,} of 200,000 tokens; compaction at 180,000]"
    assert noted["blocks"][-1] == {"type": "text", "text": note}
    assert noted["blocks"][:-1] == plain["blocks"] and noted["cache_points"] == plain["cache_points"]
    assert noted["cache"]["reason"] == "appended_only"  # the tail is no setting of the prefix

    response = owner.client.patch(
        f"{BASE}/", {"settings": {"budget_note": True, "max_tokens": 100_000}}, format="json"
    )
    assert response.status_code == 200, response.content
    by_setting = owner.post(f"{BASE}/render/", {"format": "openai_chat"}).json()
    assert by_setting["request"]["messages"][-1]["content"][-1]["text"].endswith(
        "of 100,000 tokens; compaction at 90,000]"
    )
    off = owner.post(f"{BASE}/render/", {"format": "openai_chat", "budget_note": False}).json()
    assert "[context:" not in str(off["request"])


def test_a_budget_note_that_is_no_boolean_is_a_400(owner, conversation):
    response = owner.post(f"{BASE}/render/", {"budget_note": "yes"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"
    setting = owner.client.patch(f"{BASE}/", {"settings": {"budget_note": 1}}, format="json")
    assert setting.status_code == 400
