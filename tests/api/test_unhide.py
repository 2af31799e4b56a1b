"""``POST …/unhide/``: the blocks at a path render in full again from the next render on, whoever
hid them; the cache explainer says ``hidden``; popped messages stay popped."""

import pytest

from tests.factories import add_turns
from tests.fixtures.two_tenants import CONTEXT, TOOL_RESULT_PATH
from timeline_app.models import Block, Timeline
from timeline_app.rendering.ttl import ttl_replacement_tokens

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
PATH = "tc:turn_1.tc_1x1.result"
HIDDEN = "[hidden: read it by path]"


def render(owner, now, **body):
    response = owner.post(f"{BASE}/render/", {"now": now, "format": "text", "debug": True, **body})
    assert response.status_code == 200, response.content
    return response.json()


def test_unhide_undoes_a_hide_from_the_next_render_and_the_explainer_says_hidden(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 3)
    written = Block.objects.get(path=PATH)
    plain = render(owner, "2026-03-01T12:00:00Z")
    owner.post(f"{BASE}/hide/", {"path": PATH, "replacement_text": HIDDEN})
    hidden = render(owner, "2026-03-01T12:01:00Z")
    assert HIDDEN in hidden["debug"]

    response = owner.post(f"{BASE}/unhide/", {"path": PATH})
    assert response.status_code == 200, response.content
    [block] = response.json()["blocks"]
    assert (block["path"], block["hidden"], block["replacement_text"], block["hidden_reason"]) == (
        PATH,
        False,
        "",
        "",
    )
    stored = Block.objects.get(path=PATH)
    assert not stored.hidden and stored.replacement_tokens == written.replacement_tokens
    assert stored.replacement_tokens == ttl_replacement_tokens(stored.to_value())

    shown = render(owner, "2026-03-01T12:02:00Z")
    assert HIDDEN not in shown["debug"] and "word1_1_0" in shown["debug"]
    assert shown["tokens"]["visible"] == plain["tokens"]["visible"]
    cache = shown["cache"]
    assert cache["reason"] == "hidden"
    assert cache["first_changed_path"] == PATH
    conv = owner.get(f"{BASE}/").json()
    assert conv["visible_tokens"] == plain["tokens"]["visible"]


def test_unhide_of_a_visible_block_changes_nothing(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 1)
    before = Block.objects.get(path=PATH)
    response = owner.post(f"{BASE}/unhide/", {"path": PATH})
    assert response.status_code == 200
    after = Block.objects.get(path=PATH)
    assert (after.hidden, after.replacement_tokens) == (False, before.replacement_tokens)


def test_a_ttl_pruned_block_comes_back_and_is_pruned_again_at_the_next_cold_cache(owner, conversation):
    conversation.settings = {"ttl_keep_recent_turns": 2}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 4)
    render(owner, "2026-01-01T00:00:00Z")
    cold = render(owner, "2026-01-01T00:20:00Z")
    assert PATH in cold["pruning"]["hidden_paths"]
    assert Block.objects.get(path=PATH).hidden_reason == "ttl"

    assert owner.post(f"{BASE}/unhide/", {"path": PATH}).status_code == 200
    warm = render(owner, "2026-01-01T00:21:00Z")
    assert warm["pruning"]["status"] == "fresh" and "word1_1_0" in warm["debug"]
    assert warm["cache"]["reason"] == "hidden"
    cold_again = render(owner, "2026-01-01T00:40:00Z")
    assert cold_again["pruning"]["hidden_paths"] == [PATH]
    assert Block.objects.get(path=PATH).hidden_reason == "ttl"


def test_a_popped_message_stays_popped(owner, conversation):
    url = f"{BASE}/contexts/{CONTEXT}/messages/"
    owner.post(url, {"messages": [{"role": "user", "content": "keep", "message_id": "m1"}]})
    owner.post(url, {"messages": [{"role": "user", "content": "gone", "message_id": "m2"}]})
    popped = owner.post(f"{url}pop/").json()["messages"]
    assert [m["message_id"] for m in popped] == ["m2"]
    response = owner.post(f"{BASE}/contexts/{CONTEXT}/unhide/", {"path": "ar:msg.m2"})
    assert response.status_code == 200, response.content
    assert response.json()["blocks"][0]["hidden_reason"] == "popped"
    assert [m["content"] for m in owner.get(url).json()["messages"]] == ["keep"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"path": "tc:turn_9.none.result"}, 404, "not_found"),
        ({"path": ""}, 400, "invalid"),
        ({}, 400, "invalid"),
        ({"path": PATH, "replacement_text": "x"}, 400, "invalid"),
        ({"path": 5}, 400, "invalid"),
    ],
)
def test_bad_input_is_a_clean_4xx_and_changes_nothing(owner, conversation, body, status, code):
    add_turns(Timeline.objects.get(conversation=conversation), 1)
    owner.post(f"{BASE}/hide/", {"path": PATH, "replacement_text": HIDDEN})
    response = owner.post(f"{BASE}/unhide/", body)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert Block.objects.get(path=PATH).hidden


def test_unhide_shows_only_the_callers_block(two_tenants):
    """The same path is hidden in acme/c1 main and attempt_a, acme/c2 and globex/c1: an unhide of
    acme/c1 main shows that one only; another tenant cannot unhide anything of acme's."""
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    prefixes = [
        (mine, mine.url),
        (mine, f"{mine.url}contexts/{CONTEXT}/"),
        (same, same.url),
        (other, other.url),
    ]
    for side, prefix in prefixes:
        hidden = side.caller.post(f"{prefix}hide/", {"path": TOOL_RESULT_PATH, "replacement_text": "x"})
        assert hidden.status_code == 200
    assert (
        other.caller.post("/api/v1/conversations/c2/unhide/", {"path": TOOL_RESULT_PATH}).status_code == 404
    )
    assert mine.caller.post(f"{mine.url}unhide/", {"path": TOOL_RESULT_PATH}).status_code == 200
    states = {
        (
            row.timeline.conversation.tenant.name,
            row.timeline.conversation.public_id,
            row.timeline.name,
        ): row.hidden
        for row in Block.objects.filter(path=TOOL_RESULT_PATH).select_related(
            "timeline__conversation__tenant"
        )
    }
    assert states == {
        ("acme", "c1", "main"): False,
        ("acme", "c1", CONTEXT): True,
        ("acme", "c2", "main"): True,
        ("acme", "c2", CONTEXT): False,
        ("globex", "c1", "main"): True,
        ("globex", "c1", CONTEXT): False,
    }
