"""Issue 20, point 2: any JSON value of the wrong type (object, array, number, bool, null) in any
field of a message, a block, a turn or an import is a 4xx in the error shape, and nothing is
stored. (A ``{"role": {"a": 1}}`` was a 500: an unhashable role looked up in a dict.)

Each case names a valid body, the path of one field in it and the JSON types that field accepts;
hypothesis puts any value of another type there."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from timeline_app.models import Block, Compaction, Conversation, Source, Timeline

from .hostile import C, assert_error

pytestmark = pytest.mark.django_db

Path = tuple[str | int, ...]

# ---------------------------------------------------------------- valid bodies

USER = {"role": "user", "content": "hi", "name": "ann"}
PARTS = {
    "role": "user",
    "content": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://a.example/i.png", "detail": "low"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        {"type": "file", "file": {"file_data": "AAAA", "filename": "f.pdf"}},
    ],
}
ASSISTANT = {
    "role": "assistant",
    "content": None,
    "refusal": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
TOOL = {"role": "tool", "content": "42", "tool_call_id": "call_1"}

STR, NUM, INT, BOOL, OBJ, ARR, NULL = "string", "number", "integer", "boolean", "object", "array", "null"

# (message, field path inside it, accepted JSON types)
MESSAGE_FIELDS: list[tuple[dict[str, Any], Path, set[str]]] = [
    (USER, ("role",), {STR}),
    (TOOL, ("role",), {STR}),
    (ASSISTANT, ("role",), {STR}),
    (USER, ("content",), {STR, ARR}),
    (USER, ("name",), {STR}),
    (TOOL, ("content",), {STR, ARR}),
    (TOOL, ("tool_call_id",), {STR}),
    (ASSISTANT, ("refusal",), {STR, NULL}),
    (ASSISTANT, ("tool_calls",), {ARR}),
    (ASSISTANT, ("tool_calls", 0), {OBJ}),
    (ASSISTANT, ("tool_calls", 0, "id"), {STR}),
    (ASSISTANT, ("tool_calls", 0, "type"), {STR}),
    (ASSISTANT, ("tool_calls", 0, "function"), {OBJ}),
    (ASSISTANT, ("tool_calls", 0, "function", "name"), {STR}),
    (ASSISTANT, ("tool_calls", 0, "function", "arguments"), {STR}),
    (PARTS, ("content", 0), {OBJ}),
    (PARTS, ("content", 0, "type"), {STR}),
    (PARTS, ("content", 0, "text"), {STR}),
    (PARTS, ("content", 1, "image_url"), {OBJ}),
    (PARTS, ("content", 1, "image_url", "url"), {STR}),
    (PARTS, ("content", 1, "image_url", "detail"), {STR}),
    (PARTS, ("content", 2, "input_audio", "data"), {STR}),
    (PARTS, ("content", 2, "input_audio", "format"), {STR}),
    (PARTS, ("content", 3, "file", "file_data"), {STR}),
    (PARTS, ("content", 3, "file", "filename"), {STR}),
]


def _message_block(message: dict[str, Any]) -> dict[str, Any]:
    kind = {"user": "message.user", "assistant": "message.assistant"}.get(
        message["role"], "react.tool.result"
    )
    meta = {"openai_message": message, "message_id": "m1", "timestamp": "2026-01-01T00:00:00Z"}
    return {"type": kind, "text": "x", "meta": meta}


def _import(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "copy",
        "kind": "conv.timeline.v1",
        "version": 1,
        "conversation_title": "t",
        "conversation_started_at": "2026-01-01T00:00:00Z",
        "settings": {},
        "view_start_seq": 0,
        "compaction_strategy": {},
        "blocks": [*blocks, {"seq": 9, "type": "conv.range.summary", "text": "s", "path": "su:x"}],
        "sources_pool": [{"sid": 1, "url": "https://a.example", "title": "a", "text": "", "meta": {}}],
        "turn_ids": ["t1"],
        "compactions": [
            {
                "summary_seq": 9,
                "first_retained_seq": 1,
                "covered_from_seq": 1,
                "covered_to_seq": 1,
                "covered_turn_ids": ["t1"],
                "split_turn_id": "",
                "trigger": "manual",
                "before_tokens": 10,
                "after_tokens": 5,
                "compacted_tokens": 5,
                "summarizer": "extractive",
                "model": "",
            }
        ],
    }


BLOCK = {
    "type": "react.notes",
    "author": "agent",
    "turn_id": "t1",
    "ts": "2026-01-01T00:00:00Z",
    "mime": "text/plain",
    "text": "note",
    "base64": "AAAA",
    "path": "ar:t1.notes",
    "meta": {"k": 1},
    "id": "b1",
}
IMPORT_BLOCK = {**BLOCK, "seq": 1, "hidden": False, "replacement_text": "", "hidden_reason": ""}
TURN = {
    "turn_id": "t1",
    "prompt": "hi",
    "ts": "2026-01-01T00:00:00Z",
    "attachments": [{"name": "a.txt", "mime": "text/plain", "base64": "AAAA", "text": "a", "summary": "s"}],
}

# (case id, URL under the conversation c1 or the API root, body, field path, accepted types)
CASES: list[tuple[str, str, dict[str, Any], Path, set[str]]] = []
for message, path, accepted in MESSAGE_FIELDS:
    name = f"{message['role']}.{'.'.join(map(str, path))}"
    CASES.append(
        (f"messages:{name}", "c1/messages/", {"messages": [message]}, ("messages", 0, *path), accepted)
    )
    meta_path = ("blocks", 0, "meta", "openai_message", *path)
    CASES.append((f"blocks:{name}", "c1/blocks/", {"blocks": [_message_block(message)]}, meta_path, accepted))
    CASES.append(
        (f"import:{name}", "import/", _import([{"seq": 1, **_message_block(message)}]), meta_path, accepted)
    )
CASES += [
    ("messages:messages", "c1/messages/", {"messages": [USER]}, ("messages",), {ARR}),
    ("messages:messages.0", "c1/messages/", {"messages": [USER]}, ("messages", 0), {OBJ}),
    (
        "messages:message_id",
        "c1/messages/",
        {"messages": [{**USER, "message_id": "m1"}]},
        ("messages", 0, "message_id"),
        {STR, NULL},
    ),
    (
        "messages:timestamp",
        "c1/messages/",
        {"messages": [{**USER, "timestamp": "2026-01-01T00:00:00Z"}]},
        ("messages", 0, "timestamp"),
        {STR, NULL},
    ),
    ("blocks:blocks", "c1/blocks/", {"blocks": [BLOCK]}, ("blocks",), {ARR}),
    ("blocks:blocks.0", "c1/blocks/", {"blocks": [BLOCK]}, ("blocks", 0), {OBJ}),
    *(
        (
            f"blocks:{key}",
            "c1/blocks/",
            {"blocks": [BLOCK]},
            ("blocks", 0, key),
            {OBJ} if key == "meta" else {STR},
        )
        for key in BLOCK
    ),
    *(
        (
            f"blocks:message.{key}",
            "c1/blocks/",
            {"blocks": [_message_block(USER)]},
            ("blocks", 0, "meta", key),
            {STR},
        )
        for key in ("message_id", "timestamp")
    ),
    ("turns:body", "c1/turns/", TURN, (), {OBJ}),
    *((f"turns:{key}", "c1/turns/", TURN, (key,), {ARR} if key == "attachments" else {STR}) for key in TURN),
    ("turns:attachments.0", "c1/turns/", TURN, ("attachments", 0), {OBJ}),
    *(
        (f"turns:attachments.{key}", "c1/turns/", TURN, ("attachments", 0, key), {STR})
        for key in TURN["attachments"][0]
    ),
    ("import:body", "import/", _import([IMPORT_BLOCK]), (), {OBJ}),
]
_IMPORT_TOP = {
    "id": {STR},
    "kind": {STR},
    "version": {INT},
    "conversation_title": {STR},
    "conversation_started_at": {STR},
    "settings": {OBJ},
    "view_start_seq": {INT},
    "compaction_strategy": {OBJ},
    "blocks": {ARR},
    "sources_pool": {ARR},
    "turn_ids": {ARR},
    "compactions": {ARR},
    "ts": {STR},
    "conversation_id": {STR},
    "context": {STR},
}
_IMPORT_BLOCK = {
    **{key: {STR} for key in IMPORT_BLOCK},
    "seq": {INT},
    "hidden": {BOOL},
    "meta": {OBJ},
    "id": {STR, NULL},
}
_IMPORT_SOURCE = {"sid": {INT}, "url": {STR}, "title": {STR}, "text": {STR}, "meta": {OBJ}}
_IMPORT_COMPACTION = {
    **{key: {INT} for key in ("summary_seq", "first_retained_seq", "before_tokens", "after_tokens", "compacted_tokens")},
    "covered_from_seq": {INT, NULL}, "covered_to_seq": {INT, NULL}, "covered_turn_ids": {ARR},
    **{key: {STR} for key in ("split_turn_id", "trigger", "summarizer", "model")},
}  # fmt: skip
IMPORT = _import([IMPORT_BLOCK])
CASES += [(f"import:{key}", "import/", IMPORT, (key,), types) for key, types in _IMPORT_TOP.items()]
CASES += [
    (f"import:blocks.{key}", "import/", IMPORT, ("blocks", 0, key), types)
    for key, types in _IMPORT_BLOCK.items()
]
CASES += [
    (f"import:sources.{key}", "import/", IMPORT, ("sources_pool", 0, key), types)
    for key, types in _IMPORT_SOURCE.items()
]
CASES += [
    (f"import:compactions.{key}", "import/", IMPORT, ("compactions", 0, key), types)
    for key, types in _IMPORT_COMPACTION.items()
]
CASES += [
    ("import:blocks.0", "import/", IMPORT, ("blocks", 0), {OBJ}),
    ("import:turn_ids.0", "import/", IMPORT, ("turn_ids", 0), {STR}),
    ("import:compactions.covered_turn_ids.0", "import/", IMPORT, ("compactions", 0, "covered_turn_ids", 0), {STR}),
]  # fmt: skip

# ---------------------------------------------------------------- values of the wrong type

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON_VALUES = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def json_type(value: Any) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return NUM
    if isinstance(value, str):
        return STR
    return OBJ if isinstance(value, dict) else ARR


def replaced(body: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    body = copy.deepcopy(body)
    holder = body
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return body


def snapshot() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Conversation, Timeline, Block, Source, Compaction))


@pytest.mark.parametrize(
    ("url", "body"), [(url, body) for _, url, body, _, _ in CASES], ids=[c[0] for c in CASES]
)
def test_each_valid_body_is_accepted(owner, conversation, url, body):
    """The bodies the cases below spoil are valid as they are: a 400 there is the field's doing."""
    response = owner.post(f"{C}/{url}", body)
    assert response.status_code in (200, 201), response.content[:500]


@pytest.mark.parametrize(
    ("url", "body", "path", "accepted"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
@settings(
    max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_value_of_the_wrong_json_type_is_a_4xx_and_stores_nothing(
    owner, conversation, url, body, path, accepted, data
):
    owner.client.raise_request_exception = False  # a 500 is an answer to assert on, not an exception
    value = data.draw(
        JSON_VALUES.filter(
            lambda v: json_type(v) not in accepted and not (json_type(v) == INT and NUM in accepted)
        ),
        label="value",
    )
    before = snapshot()
    response = owner.post_raw(f"{C}/{url}", json.dumps(replaced(body, path, value)))
    assert_error(response, 400)
    assert snapshot() == before


@pytest.mark.parametrize("key", ["message_id", "timestamp"])
@pytest.mark.parametrize("value", ["m2", "2026-01-01T00:00:00Z", {"a": 1}, None])
@pytest.mark.parametrize("url", ["c1/blocks/", "import/"])
def test_a_stored_message_carrying_its_id_or_time_inside_is_a_400(owner, conversation, key, value, url):
    """A block keeps a message's id and time in ``meta``; inside ``meta.openai_message`` they were
    stored unchecked (``{"timestamp": {"a": 1}}`` too) and rendered into the OpenAI chat message."""
    block = _message_block({**USER, key: value})
    body = {"blocks": [block]} if url == "c1/blocks/" else _import([{"seq": 1, **block}])
    before = snapshot()
    error = assert_error(owner.post(f"{C}/{url}", body), 400)
    assert f"blocks[0].meta.openai_message.{key}" in error["details"]
    assert snapshot() == before
