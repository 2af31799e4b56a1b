"""A replayed write (a block, turn or message id the context knows) answers 200 with the stored
rows; 201 only when the request created something."""

import pytest

from timeline_app.models import Block

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations/c1"


@pytest.mark.parametrize("prefix", [f"{C}/", f"{C}/contexts/attempt_a/"], ids=["main", "named"])
def test_a_replayed_block_answers_200_with_the_stored_row(owner, conversation, prefix):
    payload = {"blocks": [{"type": "react.notes", "text": "once", "id": "n-1"}]}
    first = owner.post(f"{prefix}blocks/", payload)
    again = owner.post(f"{prefix}blocks/", payload)
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json() == first.json()
    assert Block.objects.count() == 1


def test_a_request_with_one_new_block_among_replays_answers_201(owner, conversation):
    owner.post(f"{C}/blocks/", {"blocks": [{"type": "react.notes", "text": "a", "id": "a"}]})
    mixed = owner.post(
        f"{C}/blocks/",
        {"blocks": [{"type": "react.notes", "text": "a", "id": "a"}, {"type": "react.notes", "text": "b"}]},
    )
    assert mixed.status_code == 201
    assert [b["seq"] for b in mixed.json()["blocks"]] == [1, 2]


def test_a_replayed_turn_answers_200_with_its_stored_blocks(owner, conversation):
    turn = {"turn_id": "turn_1", "prompt": "hi", "attachments": [{"name": "a.txt", "mime": "text/plain"}]}
    first = owner.post(f"{C}/turns/", turn)
    again = owner.post(f"{C}/turns/", turn)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert Block.objects.count() == 3


def test_a_replayed_message_answers_200_and_a_new_one_201(owner, conversation):
    url = f"{C}/contexts/attempt_a/messages/"
    message = {"role": "user", "content": "hi", "message_id": "m-1"}
    first = owner.post(url, {"messages": [message]})
    again = owner.post(url, {"messages": [message]})
    other = owner.post(url, {"messages": [message, {"role": "user", "content": "and", "message_id": "m-2"}]})
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json() == first.json()


def test_the_same_block_id_in_another_context_or_tenant_is_not_a_replay(two_tenants):
    """acme/c1 main, its attempt_a, acme/c2 and globex/c1 all hold `tc_1.call` already (planted):
    a new context of each still creates its own."""
    for side in (two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant):
        fresh = side.caller.post(
            f"{side.url}contexts/attempt_b/blocks/", {"blocks": [{"type": "react.notes", "id": "tc_1.call"}]}
        )
        assert fresh.status_code == 201, fresh.content
        assert fresh.json()["blocks"][0]["seq"] == 1
