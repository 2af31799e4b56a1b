"""Issue 20.4: a stored ``meta`` is capped (bytes of its canonical JSON, keys at every level,
nesting depth) on every path that stores one: blocks, sources, messages, import. Over a cap is a
400 in the one error shape, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from timeline_app.models import Block, Conversation, Source

from .hostile import C, assert_error, assert_still_readable

pytestmark = pytest.mark.django_db
SMALL = {"TIMELINE_MAX_META_BYTES": 200, "TIMELINE_MAX_META_KEYS": 20, "TIMELINE_MAX_META_DEPTH": 4}


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


OVER = [
    ("bytes", {"note": "x" * 200}),
    ("keys", {"k": {str(n): n for n in range(20)}}),
    ("depth", nested(5)),
]


@override_settings(**SMALL)
@pytest.mark.parametrize("limit, meta", OVER, ids=[case[0] for case in OVER])
def test_a_block_meta_over_a_cap_is_a_400_and_stores_nothing(owner, conversation, limit, meta):
    error = assert_error(owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": meta}]}), 400)
    assert "meta" in error["details"]["blocks"]["0"], error
    assert Block.objects.count() == 0
    assert_still_readable(owner, "c1")


@override_settings(**SMALL)
def test_a_block_meta_at_every_cap_is_stored(owner, conversation):
    # {"a":{"a":{"a":{}}}} is 4 levels; 20 keys in all; 200 bytes of canonical JSON exactly.
    meta = {"a": nested(3), **{f"k{n:02}": 0 for n in range(16)}}
    meta["z"] = "y" * (200 - len(canonical(meta)) - len(',"z":""'))
    assert len(canonical(meta).encode()) == 200
    response = owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": meta}]})
    assert response.status_code == 201, response.content
    assert Block.objects.get().meta == meta


def canonical(value: dict) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@override_settings(**SMALL)
def test_a_source_meta_over_a_cap_is_a_400(owner, conversation):
    body = {"sources": [{"url": "https://a.example", "meta": {"k": {str(n): n for n in range(20)}}}]}
    error = assert_error(owner.post(f"{C}/c1/sources/", body), 400)
    assert "meta" in str(error["details"])
    assert not Source.objects.exists()


@override_settings(**SMALL)
def test_a_message_with_more_parts_than_the_key_cap_is_a_400(owner, conversation):
    parts = [{"type": "text", "text": f"p{n}"} for n in range(10)]  # 20 keys, plus the meta's own
    error = assert_error(
        owner.post(f"{C}/c1/messages/", {"messages": [{"role": "user", "content": parts}]}), 400
    )
    assert "messages[0]" in error["details"]
    assert Block.objects.count() == 0


@override_settings(**SMALL)
def test_a_message_longer_than_the_byte_cap_is_stored(owner, conversation):
    # The message's own bytes are bounded by the text and attachment limits, not by the meta cap.
    response = owner.post(f"{C}/c1/messages/", {"messages": [{"role": "user", "content": "w" * 1000}]})
    assert response.status_code == 201, response.content


def test_import_refuses_a_block_meta_over_a_cap_and_accepts_its_messages(owner, conversation):
    assert (
        owner.post(f"{C}/c1/messages/", {"messages": [{"role": "user", "content": "w" * 1000}]}).status_code
        == 201
    )
    owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": {"n": 1}}]})
    exported = owner.get(f"{C}/c1/timeline/").json()
    with override_settings(**SMALL):
        assert owner.post(f"{C}/import/", {**exported, "id": "copy"}).status_code == 201
        exported["blocks"][-1]["meta"] = {"k": {str(n): n for n in range(20)}}
        error = assert_error(owner.post(f"{C}/import/", {**exported, "id": "copy2"}), 400)
    assert "meta" in str(error["details"])
    assert not Conversation.objects.filter(public_id="copy2").exists()
