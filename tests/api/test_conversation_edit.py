"""``PATCH …/conversations/{conv}/``: title and settings (replacing the overrides object), validated
like creation, seen by the next render."""

import pytest

from tests.factories import add_turns
from timeline_app.models import Conversation

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"
T0 = "2026-03-01T12:00:00Z"
T1 = "2026-03-01T12:01:00Z"


def patch(caller, conv, body):
    return caller.client.patch(f"{C}/{conv}/", body, format="json")


def test_patch_changes_the_title_and_replaces_the_settings(owner, conversation):
    owner.client.patch(f"{C}/c1/", {"settings": {"max_tokens": 50000, "threshold": 0.8}}, format="json")
    response = patch(owner, "c1", {"title": "Renamed", "settings": {"cache_ttl_seconds": 3600}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["title"] == "Renamed"
    assert body["settings"] == {"cache_ttl_seconds": 3600}  # replaced, not merged
    assert {"block_count", "visible_tokens", "contexts"} <= set(body)
    conversation.refresh_from_db()
    assert (conversation.title, conversation.settings) == ("Renamed", {"cache_ttl_seconds": 3600})


def test_patch_with_only_a_title_keeps_the_settings(owner, conversation):
    patch(owner, "c1", {"settings": {"max_tokens": 50000}})
    assert patch(owner, "c1", {"title": ""}).json()["settings"] == {"max_tokens": 50000}
    assert patch(owner, "c1", {"settings": {}}).json()["settings"] == {}


@pytest.mark.parametrize(
    "body",
    [
        {"settings": {"max_tokenz": 1}},
        {"settings": {"max_tokens": "many"}},
        {"settings": {"threshold": 7}},
        {"settings": {"max_tokens": 50000, "keep_recent_tokens": 50001}},
        {"settings": {"keep_recent_tokens": 200001}},
        {"settings": []},
        {"title": 5},
        {"title": "x" * 501},
        {"colour": "red"},
        {"id": "other"},
    ],
)
def test_bad_input_is_a_400_and_changes_nothing(owner, conversation, body):
    patch(owner, "c1", {"title": "Kept", "settings": {"max_tokens": 50000}})
    response = patch(owner, "c1", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    conversation.refresh_from_db()
    assert (conversation.title, conversation.settings) == ("Kept", {"max_tokens": 50000})


def test_the_next_render_says_settings_changed_and_uses_them(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render = f"{C}/c1/render/"
    assert owner.post(render, {"now": T0}).json()["tokens"]["max_tokens"] == 200000
    patch(owner, "c1", {"settings": {"max_tokens": 50000}})
    body = owner.post(render, {"now": T1}).json()
    assert body["tokens"]["max_tokens"] == 50000
    assert body["cache"]["reason"] == "settings_changed"


def test_a_title_change_alone_leaves_the_cache_intact(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render = f"{C}/c1/render/"
    owner.post(render, {"now": T0})
    patch(owner, "c1", {"title": "Renamed"})
    assert owner.post(render, {"now": T1}).json()["cache"]["reason"] == "appended_only"


def test_patch_changes_only_the_callers_conversation(two_tenants):
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    assert patch(mine.caller, "c1", {"title": "Mine", "settings": {"max_tokens": 50000}}).status_code == 200
    titles = dict(Conversation.objects.values_list("tenant__name", "title").filter(public_id="c1"))
    assert titles == {"acme": "Mine", "globex": f"Trip {other.marker}"}
    for conversation in (same.conversation, other.conversation):
        conversation.refresh_from_db()
        assert conversation.settings == {}
    # another tenant's conversation of an id the caller does not have is a 404
    assert patch(other.caller, "c2", {"title": "x"}).status_code == 404
    same.conversation.refresh_from_db()
    assert same.conversation.title == f"Trip {same.marker}"


def test_patch_needs_a_key(anonymous, conversation):
    assert anonymous.client.patch(f"{C}/c1/", {"title": "x"}, format="json").status_code == 401


def test_creation_refuses_keep_recent_tokens_over_max_tokens_and_stores_nothing(owner):
    """Issue 30, defect 6; at the limit it is accepted."""
    over = owner.post(
        "/api/v1/conversations/", {"id": "c9", "settings": {"max_tokens": 8000, "keep_recent_tokens": 8001}}
    )
    assert over.status_code == 400, over.content
    assert set(over.json()["error"]["details"]["settings"]) == {"keep_recent_tokens"}
    assert owner.get("/api/v1/conversations/c9/").status_code == 404
    at = owner.post(
        "/api/v1/conversations/", {"id": "c9", "settings": {"max_tokens": 8000, "keep_recent_tokens": 8000}}
    )
    assert at.status_code == 201, at.content
