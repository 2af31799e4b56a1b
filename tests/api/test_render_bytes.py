"""Byte-stable rendering over HTTP (DESIGN §4): the same stored blocks give the same bytes, with
sorted keys, so the provider's prefix cache hits."""

import json

import pytest

from tests.factories import add_turns

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"


def blocks_bytes(content: bytes) -> bytes:
    """The raw ``"blocks": [...]`` member of a render response (the first key once sorted)."""
    assert content.startswith(b'{"blocks":'), content[:40]
    return content[: content.index(b'],"cache') + 1]


def test_two_renders_of_the_same_blocks_are_byte_identical(owner, conversation):
    add_turns(conversation.timelines.get(), 3)
    first = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:00:00Z"})
    second = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:00:05Z"})
    assert first.status_code == second.status_code == 200
    assert blocks_bytes(first.content) == blocks_bytes(second.content)


def test_render_json_has_sorted_keys_and_unescaped_utf8(owner, conversation):
    owner.post(f"{BASE}/turns/", {"turn_id": "turn_u", "prompt": "Grüße aus Wuppertal"})
    content = owner.post(f"{BASE}/render/", {}).content
    assert "Grüße".encode() in content, "UTF-8 kept as is"

    def check(value):
        if isinstance(value, dict):
            assert list(value) == sorted(value), list(value)
            for item in value.values():
                check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)

    check(json.loads(content, object_pairs_hook=dict))
