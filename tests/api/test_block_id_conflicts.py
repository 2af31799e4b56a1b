"""Issue 30, defect 0: a block id stored already with another body is a 409 and changes nothing
(as the messages API); the same body again is a replay (200). "The same body" is what the client
sent: an omitted ``turn_id``, ``ts`` or ``path`` is whatever the server filled in."""

import base64

import pytest

from timeline_app.models import Block

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations/c1"
FIRST = {
    "type": "react.notes",
    "author": "react",
    "turn_id": "turn_1",
    "ts": "2026-01-01T00:00:00Z",
    "mime": "text/plain",
    "text": "once",
    "base64": base64.b64encode(b"raw").decode(),
    "path": "ar:notes.1",
    "meta": {"k": [1, {"deep": "x"}]},
    "id": "n-1",
}
CHANGES = {
    "type": "react.plan",
    "author": "user",
    "turn_id": "turn_2",
    "ts": "2026-01-01T00:00:01Z",
    "mime": "text/markdown",
    "text": "twice",
    "base64": base64.b64encode(b"RAW").decode(),
    "path": "ar:notes.2",
    "meta": {"k": [1, {"deep": "y"}]},
}
FIELD = {"base64": "data"}


def stored() -> list[tuple]:
    return list(Block.objects.order_by("seq").values_list("seq", "client_id", "text", "meta", "turn_id"))


@pytest.mark.parametrize("prefix", [f"{C}/", f"{C}/contexts/attempt_a/"], ids=["main", "named"])
@pytest.mark.parametrize("field", sorted(CHANGES))
def test_the_same_block_id_with_another_value_of_any_sent_field_is_a_409(owner, conversation, prefix, field):
    assert owner.post(f"{prefix}blocks/", {"blocks": [FIRST]}).status_code == 201
    before = stored()

    answer = owner.post(f"{prefix}blocks/", {"blocks": [{**FIRST, field: CHANGES[field]}]})

    assert answer.status_code == 409, answer.content
    assert answer.json()["error"]["code"] == "conflict"
    assert answer.json()["error"]["details"] == {
        "n-1": f"stored already with a different {FIELD.get(field, field)}"
    }
    assert stored() == before


@pytest.mark.parametrize("field", ["text", "meta", "base64", "mime"])
def test_a_sent_field_left_out_on_the_replay_is_its_default_so_a_difference(owner, conversation, field):
    """Fields with a fixed default (no server state): leaving one out sends ``""`` / ``{}``."""
    owner.post(f"{C}/blocks/", {"blocks": [FIRST]})
    replay = {name: value for name, value in FIRST.items() if name != field}
    assert owner.post(f"{C}/blocks/", {"blocks": [replay]}).status_code == 409


def test_an_author_left_out_on_the_replay_is_the_types_default_author(owner, conversation):
    """A block without an author gets its type's documented one (issue 32): a replay without it
    is the same block when the stored author is that default, a difference when it is not."""
    owner.post(f"{C}/blocks/", {"blocks": [FIRST]})  # react.notes by "react", its default
    assert (
        owner.post(
            f"{C}/blocks/", {"blocks": [{k: v for k, v in FIRST.items() if k != "author"}]}
        ).status_code
        == 200
    )
    other = {**FIRST, "id": "n-2", "author": "planner"}
    assert owner.post(f"{C}/blocks/", {"blocks": [other]}).status_code == 201
    replay = {k: v for k, v in other.items() if k != "author"}
    assert owner.post(f"{C}/blocks/", {"blocks": [replay]}).status_code == 409


def test_the_same_body_again_is_a_replay_even_after_a_hide_and_later_blocks(owner, conversation):
    first = owner.post(f"{C}/blocks/", {"blocks": [FIRST]})
    owner.post(f"{C}/blocks/", {"blocks": [{"type": "turn.header", "turn_id": "turn_9"}]})
    assert owner.post(f"{C}/hide/", {"path": "ar:notes.1", "replacement_text": "gone"}).status_code == 200

    again = owner.post(f"{C}/blocks/", {"blocks": [FIRST]})

    assert again.status_code == 200, again.content
    assert again.json()["blocks"][0]["seq"] == first.json()["blocks"][0]["seq"]
    assert again.json()["blocks"][0]["hidden"] is True
    assert Block.objects.count() == 2


def test_server_filled_fields_left_out_again_are_not_a_difference(owner, conversation):
    """turn_id (the current turn), ts (the time of the write) and path (the seed path) were filled
    in by the server; the replay leaves them out again after another turn started and time passed."""
    owner.post(f"{C}/turns/", {"turn_id": "turn_1", "prompt": "first"})
    call = {"type": "react.tool.call", "text": "{}", "meta": {"tool_call_id": "tc_1"}, "id": "call-1"}
    first = owner.post(f"{C}/blocks/", {"blocks": [call]}).json()["blocks"][0]
    assert (first["turn_id"], first["path"]) == ("turn_1", "tc:turn_1.tc_1.call")
    owner.post(f"{C}/turns/", {"turn_id": "turn_2", "prompt": "second"})

    again = owner.post(f"{C}/blocks/", {"blocks": [call]})
    explicit = owner.post(
        f"{C}/blocks/",
        {"blocks": [{**call, "turn_id": "turn_1", "ts": first["ts"], "path": first["path"]}]},
    )

    assert (again.status_code, explicit.status_code) == (200, 200)
    assert again.json()["blocks"] == explicit.json()["blocks"] == [first]


def test_one_conflict_in_a_request_stores_none_of_its_new_blocks(owner, conversation):
    owner.post(f"{C}/blocks/", {"blocks": [FIRST]})
    before = stored()

    answer = owner.post(
        f"{C}/blocks/",
        {"blocks": [{"type": "react.notes", "text": "new", "id": "n-2"}, {**FIRST, "text": "changed"}]},
    )

    assert answer.status_code == 409
    assert stored() == before


def test_the_same_id_in_another_context_is_another_block(owner, conversation):
    owner.post(f"{C}/blocks/", {"blocks": [FIRST]})
    other = owner.post(f"{C}/contexts/attempt_a/blocks/", {"blocks": [{**FIRST, "text": "other"}]})
    assert other.status_code == 201


# ---------------------------------------------------------------- turns (client ids from turn_id)

TURN = {
    "turn_id": "turn_1",
    "prompt": "hi",
    "ts": "2026-01-01T00:00:00Z",
    "attachments": [{"name": "a.txt", "mime": "text/plain", "text": "alpha"}],
}


@pytest.mark.parametrize(
    "change",
    [
        {"prompt": "hello"},
        {"ts": "2026-01-01T00:00:01Z"},
        {"attachments": [{"name": "a.txt", "mime": "text/plain", "text": "ALPHA"}]},
        {"attachments": [{"name": "a.txt", "mime": "text/markdown", "text": "alpha"}]},
        {"attachments": [{"name": "a.txt", "mime": "text/plain", "text": "alpha", "summary": "s"}]},
        {"attachments": [*TURN["attachments"], {"name": "b.txt", "mime": "text/plain"}]},
        {"attachments": []},
        {"attachments": [{"name": "b.txt", "mime": "text/plain", "text": "alpha"}]},
    ],
    ids=[
        "prompt",
        "ts",
        "attachment-text",
        "attachment-mime",
        "attachment-summary",
        "extra",
        "missing",
        "renamed",
    ],
)
def test_a_turn_started_again_with_another_body_is_a_409(owner, conversation, change):
    assert owner.post(f"{C}/turns/", TURN).status_code == 201
    owner.post(f"{C}/blocks/", {"blocks": [{"type": "react.notes", "text": "later"}]})
    before = stored()

    answer = owner.post(f"{C}/turns/", {**TURN, **change})

    assert answer.status_code == 409, answer.content
    assert answer.json()["error"]["code"] == "conflict"
    assert stored() == before


def test_a_turn_started_again_without_ts_is_a_replay(owner, conversation):
    body = {name: value for name, value in TURN.items() if name != "ts"}
    first = owner.post(f"{C}/turns/", body)
    again = owner.post(f"{C}/turns/", body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
