import base64

import pytest
from django.test import override_settings

from timeline_app.models import Block

pytestmark = pytest.mark.django_db
URL = "/api/v1/conversations/c1/blocks/"


def test_contribute_assigns_sequence_paths_and_tokens(owner, conversation):
    owner.post("/api/v1/conversations/c1/blocks/", {"blocks": [{"type": "turn.header", "turn_id": "turn_1"}]})
    response = owner.post(
        URL,
        {
            "blocks": [
                {
                    "type": "react.tool.call",
                    "author": "react",
                    "text": "{}",
                    "meta": {"tool_call_id": "tc_a1"},
                },
                {
                    "type": "react.tool.result",
                    "author": "tool",
                    "text": "42",
                    "meta": {"tool_call_id": "tc_a1"},
                },
            ]
        },
    )
    assert response.status_code == 201
    blocks = response.json()["blocks"]
    assert [b["seq"] for b in blocks] == [2, 3]
    assert [b["path"] for b in blocks] == ["tc:turn_1.tc_a1.call", "tc:turn_1.tc_a1.result"]
    assert all(b["turn_id"] == "turn_1" and b["tokens"] > 0 for b in blocks)


def test_same_block_id_returns_the_stored_block(owner, conversation):
    payload = {"blocks": [{"type": "react.notes", "text": "once", "id": "n-1"}]}
    first = owner.post(URL, payload).json()["blocks"][0]
    again = owner.post(URL, payload).json()["blocks"][0]
    assert again["seq"] == first["seq"]
    assert Block.objects.count() == 1


def test_binary_payload_round_trips_as_base64(owner, conversation):
    raw = b"\x89PNG fake image bytes"
    encoded = base64.b64encode(raw).decode()
    block = owner.post(
        URL, {"blocks": [{"type": "user.attachment", "mime": "image/png", "base64": encoded}]}
    ).json()["blocks"][0]
    assert block["base64"] == encoded
    assert bytes(Block.objects.get().data) == raw
    assert block["tokens"] >= 1600


BAD_INPUT = [
    ("malformed json", b'{"blocks": [', "malformed_json"),
    ("not an object", b"[1, 2]", "invalid"),
    ("missing blocks", b"{}", "invalid"),
    ("empty blocks", b'{"blocks": []}', "invalid"),
    ("missing type", b'{"blocks": [{"text": "x"}]}', "invalid"),
    ("type not a string", b'{"blocks": [{"type": 5}]}', "invalid"),
    ("bad type name", b'{"blocks": [{"type": "Bad Type!"}]}', "invalid"),
    ("text not a string", b'{"blocks": [{"type": "x", "text": 12}]}', "invalid"),
    ("meta not an object", b'{"blocks": [{"type": "x", "meta": [1]}]}', "invalid"),
    ("unknown field", b'{"blocks": [{"type": "x", "colour": "red"}]}', "invalid"),
    ("invalid base64", b'{"blocks": [{"type": "x", "base64": "@@@"}]}', "invalid"),
    ("bad ts", b'{"blocks": [{"type": "x", "ts": "yesterday"}]}', "invalid"),
    ("bad path", b'{"blocks": [{"type": "x", "path": "no kind here"}]}', "invalid"),
    ("summary is reserved", b'{"blocks": [{"type": "conv.range.summary"}]}', "invalid"),
    ("duplicate ids", b'{"blocks": [{"type": "x", "id": "a"}, {"type": "x", "id": "a"}]}', "invalid"),
    ("NaN", b'{"blocks": [{"type": "x", "meta": {"v": NaN}}]}', "malformed_json"),
    (
        "too deep",
        b'{"blocks": [{"type": "x", "meta": ' + b'{"a": ' * 40 + b"1" + b"}" * 40 + b"}]}",
        "malformed_json",
    ),
    ("one good one bad", b'{"blocks": [{"type": "ok"}, {"type": 1}]}', "invalid"),
]


@pytest.mark.parametrize("name, body, code", BAD_INPUT, ids=[case[0] for case in BAD_INPUT])
def test_bad_input_is_a_4xx_json_error_and_stores_nothing(owner, conversation, name, body, code):
    response = owner.post_raw(URL, body)
    assert 400 <= response.status_code < 500, response.content
    error = response.json()["error"]
    assert error["code"] == code
    assert set(error) == {"code", "message", "details"}
    assert Block.objects.count() == 0


@override_settings(TIMELINE_MAX_BLOCK_TEXT_CHARS=100)
def test_text_over_the_limit_is_rejected(owner, conversation):
    response = owner.post(URL, {"blocks": [{"type": "x", "text": "a" * 101}]})
    assert response.status_code == 400
    assert "text" in response.json()["error"]["details"]["blocks"]["0"]
    assert Block.objects.count() == 0


@override_settings(TIMELINE_MAX_ATTACHMENT_BYTES=10)
def test_attachment_over_the_limit_is_rejected(owner, conversation):
    encoded = base64.b64encode(b"x" * 11).decode()
    response = owner.post(URL, {"blocks": [{"type": "x", "base64": encoded}]})
    assert response.status_code == 400
    assert Block.objects.count() == 0


@override_settings(TIMELINE_MAX_BLOCKS_PER_REQUEST=3)
def test_too_many_blocks_in_one_request_is_rejected(owner, conversation):
    response = owner.post(URL, {"blocks": [{"type": "x"}] * 4})
    assert response.status_code == 400
    assert Block.objects.count() == 0
