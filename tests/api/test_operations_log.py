"""``GET …/operations/``: every operation that changed what the model sees, newest first, each
written by the change it records (issue 35); filters by kind and by ``[since, until)``; another
tenant's conversation is a 404 and its entries never show."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.factories import add_turns
from tests.fixtures.two_tenants import CONTEXT, TOOL_RESULT_PATH
from timeline_app.domain.operations import KINDS
from timeline_app.models import ApiKey, Operation, Timeline
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def log(caller, base: str = BASE, **params) -> list[dict]:
    response = caller.get(f"{base}/operations/", **params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def kinds(entries: list[dict]) -> list[str]:
    return [entry["kind"] for entry in entries]


def ok(response, status=(200, 201)):
    assert response.status_code in status, response.content
    return response.json()


@pytest.mark.parametrize("base", [BASE, f"{BASE}/contexts/{CONTEXT}"])
def test_each_change_writes_its_entry_newest_first_with_who_and_what(owner, conversation, base):
    """Realistic states: after a hide and an unhide, after the TTL, a compaction and its revert."""
    name = CONTEXT if "contexts" in base else "main"
    if name != "main":
        ok(owner.post(f"{BASE}/contexts/", {"name": name}))
    timeline = Timeline.objects.get(conversation=conversation, name=name)
    ok(owner.client.patch(BASE + "/", {"settings": {"ttl_keep_recent_turns": 2}}, format="json"))
    add_turns(timeline, 4)
    hidden = ok(
        owner.post(f"{base}/hide/", {"path": "tc:turn_4.tc_4x0.result", "replacement_text": "[gone]"})
    )
    ok(owner.post(f"{base}/unhide/", {"path": "tc:turn_4.tc_4x0.result"}))
    ok(owner.post(f"{base}/render/", {"now": "2026-01-01T00:00:00Z"}))
    cold = ok(owner.post(f"{base}/render/", {"now": "2026-01-01T00:20:00Z"}))
    assert cold["pruning"]["status"] == "pruned"
    compacted = ok(owner.post(f"{base}/compact/", {"force": True, "wait": True}))
    assert compacted["status"] == "applied"
    ok(owner.post(f"{base}/compactions/{compacted['id']}/revert/"))

    entries = log(owner, base)
    # The settings change is on every context; the creation the fixture's (main) or the API's.
    assert kinds(entries) == [
        "compaction_reverted",
        "compaction_applied",
        "ttl_pruned",
        "unhidden",
        "hidden",
        "settings_changed",
        "context_created",
    ]
    reverted, applied, pruned, unhidden, hid = entries[:5]
    actor = reverted["actor"]
    assert actor.startswith("key:") and all(e["actor"] == actor for e in entries[:5])
    # The compaction's numbers, the seqs it covered, its summary's path; the revert goes back.
    assert applied["compaction_id"] == compacted["id"] == reverted["compaction_id"]
    assert (applied["tokens_before"], applied["tokens_after"]) == (
        compacted["before_tokens"],
        compacted["after_tokens"],
    )
    assert applied["seq_ranges"] == [[compacted["covered_from_seq"], compacted["covered_to_seq"]]]
    assert applied["paths"] == [compacted["summary_path"]]
    assert applied["model"] == compacted["model"]
    assert applied["details"]["threshold_tokens"] == compacted["threshold_tokens"] is not None
    assert (reverted["tokens_before"], reverted["tokens_after"]) == (
        applied["tokens_after"],
        applied["tokens_before"],
    )
    # The prune: the paths the render hid, the context's tokens before and after.
    assert sorted(pruned["paths"]) == sorted(cold["pruning"]["hidden_paths"])
    assert pruned["tokens_after"] < pruned["tokens_before"]
    # The hide and the unhide: the block's tokens, its seq and path.
    seq = hidden["blocks"][0]["seq"]
    assert hid["seq_ranges"] == [[seq, seq]] == unhidden["seq_ranges"]
    assert hid["paths"] == ["tc:turn_4.tc_4x0.result"] == unhidden["paths"]
    assert hid["tokens_after"] < hid["tokens_before"] == unhidden["tokens_after"]
    assert entries[-1]["kind"] == "context_created"
    assert entries[-1]["actor"] == ("system" if name == "main" else actor)


def test_a_settings_change_names_the_keys_it_moved_on_every_context(owner, conversation):
    ok(owner.post(f"{BASE}/contexts/", {"name": CONTEXT}))
    ok(owner.client.patch(BASE + "/", {"settings": {"max_tokens": 50_000}}, format="json"))
    ok(owner.client.patch(BASE + "/", {"title": "only the title"}, format="json"))  # no entry
    ok(owner.client.patch(BASE + "/", {"settings": {"max_tokens": 50_000}}, format="json"))  # same: none
    ok(owner.client.patch(BASE + "/", {"settings": {"threshold": 0.5}}, format="json"))
    for base in (BASE, f"{BASE}/contexts/{CONTEXT}"):
        entries = [e for e in log(owner, base) if e["kind"] == "settings_changed"]
        assert [e["details"]["settings"] for e in entries] == [
            {"max_tokens": [50_000, None], "threshold": [None, 0.5]},
            {"max_tokens": [None, 50_000]},
        ]


def test_context_branched_cleared_and_a_message_erased(owner, conversation):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    ok(owner.post(f"{BASE}/contexts/{CONTEXT}/messages/", {"messages": messages}))
    ok(owner.post(f"{BASE}/contexts/", {"name": "attempt_b", "branch_from": CONTEXT}))
    popped = ok(owner.post(f"{BASE}/contexts/attempt_b/messages/pop/"))
    response = owner.delete(f"{BASE}/contexts/{CONTEXT}/messages/")
    assert response.status_code in (200, 204), response.content

    branched = log(owner, f"{BASE}/contexts/attempt_b")
    assert kinds(branched) == ["messages_erased", "context_branched"]
    assert branched[1]["details"] == {"branched_from": CONTEXT, "messages": 2}
    assert branched[0]["details"] == {"message_id": popped["messages"][0]["message_id"]}
    source = log(owner, f"{BASE}/contexts/{CONTEXT}")
    assert kinds(source) == ["context_cleared", "context_created"]
    cleared_seqs = source[0]["seq_ranges"]
    assert len(cleared_seqs) == 1 and cleared_seqs[0][1] - cleared_seqs[0][0] + 1 >= 2


def test_a_kind_filter_repeated_or_as_a_comma_list_and_an_unknown_kind_is_a_400(owner, conversation):
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    add_turns(timeline, 2)
    ok(owner.post(f"{BASE}/hide/", {"path": "tc:turn_1.tc_1x0.result", "replacement_text": "x"}))
    ok(owner.post(f"{BASE}/unhide/", {"path": "tc:turn_1.tc_1x0.result"}))
    assert kinds(log(owner, kind="hidden")) == ["hidden"]
    assert kinds(log(owner, kind="hidden,unhidden")) == ["unhidden", "hidden"]
    assert kinds(log(owner, kind=["hidden", "context_created"])) == ["hidden", "context_created"]
    assert kinds(log(owner, kind="compaction_applied")) == []
    before = Operation.objects.count()
    response = owner.get(f"{BASE}/operations/", kind="hidden,hiden")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and "unknown kind hiden;" in json.dumps(error["details"])
    assert Operation.objects.count() == before
    assert set(KINDS) >= {"hidden", "unhidden", "ttl_pruned", "messages_erased"}


def test_since_is_inclusive_until_exclusive_with_the_usage_range_forms(owner, conversation):
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    add_turns(timeline, 3)
    for minute in (0, 1, 2):
        with time_machine.travel(T0 + timedelta(minutes=minute), tick=False):
            ok(owner.post(f"{BASE}/hide/", {"path": f"tc:turn_{minute + 1}.tc_{minute + 1}x0.result", "replacement_text": "x"}))  # fmt: skip
    at = [e["at"] for e in log(owner, kind="hidden")]
    assert at == ["2026-03-01T12:02:00.000000Z", "2026-03-01T12:01:00.000000Z", "2026-03-01T12:00:00.000000Z"]
    one = "2026-03-01T12:01:00Z"
    assert [e["at"][14:16] for e in log(owner, kind="hidden", since=one)] == ["02", "01"]
    assert [e["at"][14:16] for e in log(owner, kind="hidden", until=one)] == ["00"]
    assert [e["at"][14:16] for e in log(owner, kind="hidden", since=one, until="2026-03-01T12:02:00Z")] == [
        "01"
    ]
    # The same forms as the usage range: epoch seconds, a date; since >= until and junk are 400s.
    epoch = str(int((T0 + timedelta(minutes=1)).timestamp()))
    assert [e["at"][14:16] for e in log(owner, kind="hidden", since=epoch)] == ["02", "01"]
    assert len(log(owner, kind="hidden", since="2026-03-01", until="2026-03-02")) == 3
    for bad in ({"since": one, "until": one}, {"since": "yesterday"}, {"until": "99999999999999999999"}):
        response = owner.get(f"{BASE}/operations/", **bad)
        assert response.status_code == 400, bad
        assert set(response.json()["error"]) == {"code", "message", "details"}


def test_pages_follow_the_cursor_with_the_filters_kept(owner, conversation):
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    add_turns(timeline, 3)
    for n in (1, 2, 3):
        ok(owner.post(f"{BASE}/hide/", {"path": f"tc:turn_{n}.tc_{n}x0.result", "replacement_text": "x"}))
    first = owner.get(f"{BASE}/operations/", kind="hidden", limit=2).json()
    assert len(first["results"]) == 2 and "kind=hidden" in first["next"]
    second = owner.client.get(first["next"]).json()
    assert [e["paths"] for e in second["results"]] == [["tc:turn_1.tc_1x0.result"]]
    assert second["next"] is None
    assert owner.get(f"{BASE}/operations/", cursor="op_0000000000000000").status_code == 404
    assert owner.get(f"{BASE}/operations/", cursor="cmp_0000000000000000").status_code == 400
    assert owner.get(f"{BASE}/operations/", limit=0).status_code == 400


def test_the_page_size_is_1_to_max_page_at_both_ends(owner, conversation):
    from timeline_app.api.fields import MAX_PAGE

    timeline = Timeline.objects.get(conversation=conversation, name="main")
    add_turns(timeline, 2)
    for n in (1, 2):
        ok(owner.post(f"{BASE}/hide/", {"path": f"tc:turn_{n}.tc_{n}x0.result", "replacement_text": "x"}))
    one = owner.get(f"{BASE}/operations/", limit=1).json()
    assert len(one["results"]) == 1 and one["next"] is not None
    assert len(owner.get(f"{BASE}/operations/", limit=MAX_PAGE).json()["results"]) >= 2
    too_many = owner.get(f"{BASE}/operations/", limit=MAX_PAGE + 1)
    assert too_many.status_code == 400 and "limit" in too_many.json()["error"]["details"]


def test_another_tenants_log_is_a_404_and_its_entries_never_show(two_tenants):
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    # Each side hides the same path in the same context: matching entries on every side.
    for side in (mine, same, other):
        for prefix in (side.url, f"{side.url}contexts/{CONTEXT}/"):
            ok(
                side.caller.post(
                    f"{prefix}hide/", {"path": TOOL_RESULT_PATH, "replacement_text": side.marker}
                )
            )
    foreign = set(
        Operation.objects.exclude(conversation=mine.conversation).values_list("public_id", flat=True)
    )
    assert foreign
    for prefix in (mine.url, f"{mine.url}contexts/{CONTEXT}/"):
        entries = log(mine.caller, prefix.rstrip("/"))
        assert "hidden" in kinds(entries)
        assert not {e["id"] for e in entries} & foreign
        # Another tenant's entry as a cursor names nothing here: a 404, not its page.
        theirs = Operation.objects.filter(conversation=other.conversation).first().public_id
        assert mine.caller.get(f"{prefix}operations/", cursor=theirs).status_code == 404
    # A conversation only globex has is a 404 for acme, on the main context and a named one.
    conversation_create(tenant=other.caller.tenant, public_id="only_globex")
    assert other.caller.get("/api/v1/conversations/only_globex/operations/").status_code == 200
    for path in ("", f"contexts/{CONTEXT}/"):
        missing = mine.caller.get(f"/api/v1/conversations/only_globex/{path}operations/")
        assert missing.status_code == 404, path


def test_a_request_that_ends_in_a_500_leaves_no_actor_behind(owner, conversation, monkeypatch):
    """The actor is set once authenticated and reset in ``dispatch``'s ``finally``: DRF re-raises a
    500 past ``finalize_response``, and an actor left on the thread would sign the next change made
    there (the worker's, or another key's request) with this key. Checked here, not only by the
    suite-wide guard in conftest."""
    from timeline_app.services.operations import current_actor

    seen: list[str] = []

    def broken(**kwargs):
        seen.append(current_actor())
        raise ValueError("a bug")

    monkeypatch.setattr("timeline_app.api.render.timeline_render", broken)
    owner.client.raise_request_exception = False
    assert owner.post(f"{BASE}/render/", {}).status_code == 500
    assert seen == [f"key:{ApiKey.objects.get(tenant=owner.tenant).prefix}"]  # set while the view ran
    assert current_actor() == "system"
