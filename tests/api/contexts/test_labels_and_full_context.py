"""Label auto-naming, branching, the context list and the merged full-context view."""

from __future__ import annotations

import pytest

from timeline_app.domain.messages import next_context_name
from timeline_app.models import Block, Timeline

from .conftest import BASE, messages_url
from .test_messages_api import without_added

pytestmark = pytest.mark.django_db


def msg(content: str, at: str, message_id: str | None = None) -> dict:
    message = {"role": "user", "content": content, "timestamp": at}
    if message_id:
        message["message_id"] = message_id
    return message


def full_context(caller, labels: str | None = None) -> list[dict]:
    params = {"labels": labels} if labels is not None else {}
    response = caller.get(f"{BASE}/full-context/", **params)
    assert response.status_code == 200, response.json()
    return response.json()["messages"]


def test_labels_name_contexts_a_to_z_then_aa():
    names: list[str] = []
    for _ in range(28):
        names.append(next_context_name("attempt", names))
    assert names[:3] == ["attempt_a", "attempt_b", "attempt_c"]
    assert names[25:] == ["attempt_z", "attempt_aa", "attempt_ab"]
    assert next_context_name("attempt", ["attempt_a", "attempt_c"]) == "attempt_b"
    assert next_context_name("x", [f"x_{chr(c)}" for c in range(ord("a"), ord("z") + 1)] + ["x_aa"]) == "x_ab"


def test_creating_by_label_takes_the_next_free_name(owner, conversation):
    names = [owner.post(f"{BASE}/contexts/", {"label": "attempt"}).json()["name"] for _ in range(3)]
    assert names == ["attempt_a", "attempt_b", "attempt_c"]
    assert owner.post(f"{BASE}/contexts/", {"label": "intermediate"}).json()["name"] == "intermediate_a"
    created = owner.post(f"{BASE}/contexts/", {"name": "analysis"})
    assert created.status_code == 201 and created.json()["message_count"] == 0
    assert owner.post(f"{BASE}/contexts/", {"name": "analysis"}).status_code == 409


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"label": "attempt", "name": "x"},
        {"label": "Attempt"},
        {"label": "a b"},
        {"label": 3},
        {"name": "x", "extra": 1},
    ],
)
def test_bad_context_creation_is_a_400_and_creates_nothing(owner, conversation, body):
    assert owner.post(f"{BASE}/contexts/", body).status_code == 400
    assert list(Timeline.objects.values_list("name", flat=True)) == ["main"]


def test_branching_copies_the_view_with_the_same_ids_so_the_full_context_shows_them_once(owner, conversation):
    owner.post(
        messages_url(), {"messages": [msg("q1", "2026-01-01T00:00:01Z"), msg("q2", "2026-01-01T00:00:02Z")]}
    )
    branch = owner.post(f"{BASE}/contexts/", {"label": "attempt", "branch_from": "main"}).json()
    assert (branch["name"], branch["message_count"]) == ("attempt_a", 2)
    main = owner.get(messages_url()).json()["messages"]
    assert owner.get(messages_url("attempt_a")).json()["messages"] == main
    owner.post(messages_url("attempt_a"), {"messages": [msg("try", "2026-01-01T00:00:03Z")]})
    assert [m["content"] for m in owner.get(messages_url()).json()["messages"]] == ["q1", "q2"], (
        "main unchanged"
    )
    assert [m["content"] for m in full_context(owner, "main,attempt")] == ["q1", "q2", "try"]
    assert owner.post(f"{BASE}/contexts/", {"label": "attempt", "branch_from": "nope"}).status_code == 404


def test_full_context_of_attempt_merges_attempt_a_and_attempt_b_and_nothing_else(owner, conversation):
    owner.post(f"{BASE}/contexts/", {"label": "attempt"})
    owner.post(f"{BASE}/contexts/", {"label": "attempt"})
    owner.post(
        messages_url("attempt_a"),
        {"messages": [msg("a1", "2026-01-01T00:00:01Z"), msg("a2", "2026-01-01T00:00:04Z")]},
    )
    owner.post(messages_url("attempt_b"), {"messages": [msg("b1", "2026-01-01T00:00:02Z")]})
    owner.post(messages_url("main"), {"messages": [msg("m1", "2026-01-01T00:00:03Z")]})
    owner.post(messages_url("attempts"), {"messages": [msg("not mine", "2026-01-01T00:00:03Z")]})
    owner.post(messages_url("intermediate_a"), {"messages": [msg("i1", "2026-01-01T00:00:05Z")]})

    assert [m["content"] for m in full_context(owner, "attempt")] == ["a1", "b1", "a2"]
    assert [m["content"] for m in full_context(owner, "main")] == ["m1"]
    assert [m["content"] for m in full_context(owner, "main,intermediate")] == ["m1", "i1"]
    assert [m["content"] for m in full_context(owner)] == ["a1", "b1", "m1", "not mine", "a2", "i1"]
    assert full_context(owner, "nothing") == []
    repeated = owner.client.get(f"{BASE}/full-context/?labels=main&labels=intermediate").json()["messages"]
    assert [m["content"] for m in repeated] == ["m1", "i1"]
    assert owner.get(f"{BASE}/full-context/", labels="Bad Label").status_code == 400


def test_full_context_orders_ties_by_context_creation_then_storage_order(owner, conversation):
    at = "2026-01-01T00:00:00Z"
    owner.post(messages_url("second"), {"messages": [msg("s1", at), msg("s2", at)]})
    owner.post(messages_url("main"), {"messages": [msg("m1", at)]})  # main was created first
    assert [m["content"] for m in full_context(owner)] == ["m1", "s1", "s2"]


def test_full_context_deduplicates_by_message_id_and_respects_clear(owner, conversation):
    shared = msg("shared", "2026-01-01T00:00:01Z", "m-shared")
    owner.post(messages_url("attempt_a"), {"messages": [shared, msg("a", "2026-01-01T00:00:02Z")]})
    owner.post(messages_url("attempt_b"), {"messages": [shared]})
    owner.post(messages_url("main"), {"messages": [msg("old", "2026-01-01T00:00:00Z")]})
    owner.delete(messages_url("main"))
    merged = full_context(owner)
    assert [m["content"] for m in merged] == ["shared", "a"]
    assert without_added(merged)[0] == {"role": "user", "content": "shared"}


def test_context_list_shows_names_and_message_counts(owner, conversation):
    owner.post(
        messages_url(), {"messages": [msg("1", "2026-01-01T00:00:01Z"), msg("2", "2026-01-01T00:00:02Z")]}
    )
    owner.post(messages_url("analysis"), {"messages": [msg("x", "2026-01-01T00:00:03Z")]})
    owner.delete(messages_url("analysis"))
    owner.post(f"{BASE}/blocks/", {"blocks": [{"type": "react.notes", "text": "not a message"}]})
    contexts = owner.get(f"{BASE}/contexts/").json()["contexts"]
    summary = [
        (c["name"], c["message_count"], c["stored_message_count"], c["compaction_strategy"]) for c in contexts
    ]
    assert summary == [("main", 2, 2, {"name": "summarize"}), ("analysis", 0, 1, {"name": "summarize"})]
    assert Block.objects.count() == 4
    assert owner.get(f"{BASE}/contexts/nope/").status_code == 404
