"""Inputs schemathesis found answering 500: each is now a clean 4xx (or works), nothing stored."""

from __future__ import annotations

import json

import pytest

from timeline_app.models import Block, Conversation

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations/c1"


@pytest.mark.parametrize(
    "meta",
    [{"key": "nul \u0000 inside"}, {"nul \u0000 key": 1}, {"nested": [{"x": "\ud800"}]}, {"\udfff": 1}],
    ids=["nul value", "nul key", "lone surrogate value", "lone surrogate key"],
)
def test_unstorable_text_in_block_meta_is_a_400(owner, conversation, meta):
    response = owner.post_raw(f"{C}/blocks/", json.dumps({"blocks": [{"type": "react.notes", "meta": meta}]}))
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert not Block.objects.exists()


def test_lone_surrogate_in_a_string_field_is_a_400(owner, conversation):
    response = owner.post_raw(f"{C}/sources/", '{"sources": [{"url": "https://a.example/\\ud800"}]}')
    assert response.status_code == 400


@pytest.mark.parametrize("offset", ["+14:01", "-20:22", "+17:45"])
def test_a_utc_offset_beyond_14_hours_is_a_400(owner, conversation, offset):
    response = owner.post(f"{C}/render/", {"now": f"2030-01-01T00:00:00{offset}"})
    assert response.status_code == 400
    assert "now" in response.json()["error"]["details"]


def test_render_now_with_the_largest_offset_is_stored_in_utc(owner, conversation):
    assert owner.post(f"{C}/render/", {"now": "4562-04-09T23:55:47-14:00"}).status_code == 200
    assert owner.get(f"{C}/").status_code == 200
    assert owner.get("/api/v1/conversations/").status_code == 200


def test_a_turn_id_or_attachment_name_too_long_for_the_idempotency_key_is_a_400(owner, conversation):
    long_turn = owner.post(f"{C}/turns/", {"turn_id": "t" * 65, "prompt": "x"})
    long_name = owner.post(
        f"{C}/turns/", {"prompt": "x", "attachments": [{"name": "n" * 55, "mime": "text/plain"}]}
    )
    assert (long_turn.status_code, long_name.status_code) == (400, 400)
    longest = owner.post(
        f"{C}/turns/",
        {"turn_id": "t" * 64, "prompt": "x", "attachments": [{"name": "n" * 54, "mime": "text/plain"}]},
    )
    assert longest.status_code == 201, longest.content


def test_compact_in_the_background_answers_202_with_a_task_id(owner, conversation):
    response = owner.post(f"{C}/compact/", {})
    assert response.status_code == 202, response.content
    assert response.json()["task_id"]


def test_a_blank_write_body_on_create_context_is_a_400(owner, conversation):
    response = owner.post_raw(f"{C}/contexts/", "{}")
    assert response.status_code == 400
    assert Conversation.objects.count() == 1
