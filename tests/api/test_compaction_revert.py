"""``POST …/compactions/{id}/revert/``: the newest applied compaction taken back, the next render
byte for byte the one before it, the summary kept and marked, a 409 naming the revertible one."""

from __future__ import annotations

import json

import pytest

from tests.factories import add_turn, add_turns
from tests.fixtures.two_tenants import CONTEXT
from timeline_app.models import Block, Compaction, RenderRecord, Timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
SEEN = ("blocks", "cache_points", "tokens")


def main(conversation) -> Timeline:
    return Timeline.objects.get(conversation=conversation, name="main")


def render(caller, base: str = BASE, **body) -> dict:
    response = caller.post(f"{base}/render/", {"format": "anthropic", **body})
    assert response.status_code == 200, response.content
    return response.json()


def seen(answer: dict) -> bytes:
    """What the model is sent and charged for, as bytes."""
    return json.dumps({key: answer[key] for key in SEEN}, sort_keys=True).encode()


def compact(caller, base: str = BASE) -> dict:
    body = caller.post(f"{base}/compact/", {"force": True, "wait": True}).json()
    assert body["status"] == "applied", body
    return body


@pytest.mark.parametrize("base", [BASE, f"{BASE}/contexts/{CONTEXT}"])
def test_revert_gives_back_the_render_before_the_compaction_byte_for_byte(owner, conversation, base):
    name = CONTEXT if "contexts" in base else "main"
    timeline = Timeline.objects.get_or_create(conversation=conversation, name=name)[0]
    add_turns(timeline, 6)
    before = render(owner, base)
    compacted = compact(owner, base)
    assert seen(render(owner, base)) != seen(before)
    response = owner.post(f"{base}/compactions/{compacted['id']}/revert/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "reverted" and body["reverted_by"].startswith("key:")
    assert body["reverted_at"] is not None and body["id"] == compacted["id"]
    after = render(owner, base)
    assert seen(after) == seen(before)
    assert after["cache"]["reason"] == "compaction_reverted"
    assert render(owner, base)["cache"]["reason"] == "appended_only"  # only the first one after it
    # the summary block is kept, out of the window, marked
    summary = Block.objects.get(timeline=timeline, path=compacted["summary_path"])
    assert (summary.hidden, summary.hidden_reason) == (True, "reverted")
    assert owner.get(f"{base}/compactions/{compacted['id']}/").json() == body


def test_reverting_twice_is_a_200_that_changes_nothing(owner, conversation):
    add_turns(main(conversation), 5)
    compacted = compact(owner)
    first = owner.post(f"{BASE}/compactions/{compacted['id']}/revert/").json()
    version = main(conversation).version
    again = owner.post(f"{BASE}/compactions/{compacted['id']}/revert/")
    assert again.status_code == 200 and again.json() == first
    assert main(conversation).version == version


def test_only_the_newest_applied_compaction_can_be_reverted(owner, conversation):
    timeline = main(conversation)
    add_turns(timeline, 5)
    older = compact(owner)
    add_turn(timeline, 6)
    add_turn(timeline, 7)
    newer = compact(owner)
    skipped = owner.post(f"{BASE}/compact/", {"wait": True}).json()  # nothing to do: a skipped row
    for not_it in (older["id"], skipped["id"]):
        response = owner.post(f"{BASE}/compactions/{not_it}/revert/")
        assert response.status_code == 409, not_it
        error = response.json()["error"]
        assert error["details"]["revertible"] == newer["id"] and newer["id"] in error["message"]
    assert Compaction.objects.get(public_id=older["id"]).status == "applied"
    # newest first, one step at a time: then the older one is the newest applied
    assert owner.post(f"{BASE}/compactions/{newer['id']}/revert/").status_code == 200
    assert owner.post(f"{BASE}/compactions/{older['id']}/revert/").status_code == 200
    nothing = owner.post(f"{BASE}/compactions/{skipped['id']}/revert/")
    assert nothing.status_code == 409 and nothing.json()["error"]["details"]["revertible"] is None


def test_a_later_compaction_works_as_usual_after_a_revert(owner, conversation):
    timeline = main(conversation)
    add_turns(timeline, 5)
    first = compact(owner)
    owner.post(f"{BASE}/compactions/{first['id']}/revert/")
    add_turn(timeline, 6)
    assert render(owner)["cache"]["reason"] == "first_render"
    again = compact(owner)
    assert again["covered_turn_ids"][:1] == ["turn_1"]  # it summarizes from the start again
    rendered = render(owner)
    assert rendered["cache"]["reason"] == "compacted"
    assert f"[path: {again['summary_path']}]" in rendered["blocks"][0]["text"]
    assert not RenderRecord.objects.filter(timeline=timeline, reason="compaction_reverted").exists()


def test_another_tenants_or_contexts_compaction_is_a_404_and_stays_applied(two_tenants):
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    ids = {}
    for key, side, prefix in (
        ("named", mine, f"{mine.url}contexts/{CONTEXT}/"),
        ("same", same, same.url),
        ("other", other, other.url),
    ):
        name = CONTEXT if "contexts" in prefix else "main"
        timeline = Timeline.objects.get(conversation=side.conversation, name=name)
        for number in (1, 2, 3):  # turns of their own: the planted ones hold turn_1 already
            add_turn(timeline, number, turn_id=f"turn_r{number}")
        body = side.caller.post(f"{prefix}compact/", {"force": True, "wait": True}).json()
        assert body["status"] == "applied", (key, body)
        ids[key] = body["id"]
    for key, public_id in ids.items():
        response = mine.caller.post(f"{mine.url}compactions/{public_id}/revert/")
        assert response.status_code == 404, key
        assert response.json()["error"]["code"] == "not_found"
    assert set(Compaction.objects.filter(public_id__in=ids.values()).values_list("status", flat=True)) == {
        "applied"
    }


def test_an_exported_context_with_a_reverted_compaction_imports_to_the_same_render(owner, conversation):
    """The reverted compaction is no applied one: the export leaves it out, its summary block
    travels hidden as ``reverted``, and the imported context renders what the original does."""
    add_turns(main(conversation), 5)
    compacted = compact(owner)
    owner.post(f"{BASE}/compactions/{compacted['id']}/revert/")
    exported = owner.get(f"{BASE}/timeline/").json()
    assert exported["compactions"] == []
    summary = next(blk for blk in exported["blocks"] if blk["path"] == compacted["summary_path"])
    assert summary["hidden"] is True
    response = owner.post("/api/v1/conversations/import/", {**exported, "id": "c1-copy"})
    assert response.status_code == 201, response.content
    assert seen(render(owner, "/api/v1/conversations/c1-copy")) == seen(render(owner))
