"""Messages (pure ``parse_messages``): each malformed message or tool call is named exactly, the
limits are exact, and what passes comes back with its id and UTC time."""

from __future__ import annotations

import pytest

from timeline_app.domain.message_validation import parse_messages
from timeline_app.errors import InvalidInput

NOT_VALID = "the messages are not valid OpenAI chat messages"
F = {"name": "f", "arguments": "{}"}


def _parse(messages, *, text_chars: int = 2000):
    return parse_messages(
        messages,
        now_iso="2026-01-01T00:00:00Z",
        max_messages=3,
        max_text_chars=text_chars,
        max_attachment_bytes=3,
    )


def _details(messages, **kw) -> dict:
    with pytest.raises(InvalidInput) as caught:
        _parse(messages, **kw)
    assert str(caught.value) == NOT_VALID
    return caught.value.details


def _calls(*calls) -> list:
    return [{"role": "assistant", "content": None, "tool_calls": list(calls)}]


def test_the_list_itself() -> None:
    for raw in ("x", []):
        with pytest.raises(InvalidInput) as caught:
            _parse(raw)
        assert (str(caught.value), caught.value.details) == (
            "messages must be a non-empty list",
            {"messages": "a non-empty list"},
        )
    with pytest.raises(InvalidInput) as caught:
        _parse([{"role": "user", "content": "a"}] * 4)
    assert (str(caught.value), caught.value.details) == (
        "at most 3 messages per request",
        {"messages": "at most 3"},
    )
    assert len(_parse([{"role": "user", "content": "a"}] * 3)) == 3


@pytest.mark.parametrize(
    ("messages", "details"),
    [
        ([5], {"messages[0]": "a message is an object"}),
        ([{"role": "bot"}], {"messages[0].role": "must be one of user, assistant, tool, system"}),
        ([{"role": "user"}], {"messages[0].content": "required"}),
        (
            [{"role": "user", "content": 3}],
            {"messages[0].content": "must be a string or a list of content parts"},
        ),
        ([{"role": "user", "content": "a", "foo": 1}], {"messages[0].foo": "unknown field"}),
        (
            [{"role": "user", "content": "a", "name": ""}],
            {"messages[0].name": "must be a non-empty string of at most 256 characters"},
        ),
        (
            [{"role": "user", "content": "a", "name": "n" * 257}],
            {"messages[0].name": "must be a non-empty string of at most 256 characters"},
        ),
        (
            [{"role": "assistant"}],
            {"messages[0].content": "an assistant message needs content, tool_calls or refusal"},
        ),
        (
            [{"role": "assistant", "content": None, "refusal": 3}],
            {
                "messages[0].refusal": "must be a string or null",
                "messages[0].content": "an assistant message needs content, tool_calls or refusal",
            },
        ),
        (_calls(), {"messages[0].tool_calls": "must be a non-empty list"}),
        (_calls("x"), {"messages[0].tool_calls[0]": "a tool call is an object"}),
        (
            _calls({"id": "", "type": "x", "function": 3}),
            {
                "messages[0].tool_calls[0].id": "required: a non-empty string of at most 512 characters",
                "messages[0].tool_calls[0].type": "must be 'function'",
                "messages[0].tool_calls[0].function": "required: {name, arguments}",
            },
        ),
        (
            _calls({"id": "c" * 513, "type": "function", "function": F}),
            {"messages[0].tool_calls[0].id": "required: a non-empty string of at most 512 characters"},
        ),
        (
            _calls(
                {"id": "c", "type": "function", "function": {"name": "", "arguments": 1, "z": 1}, "extra": 2}
            ),
            {
                "messages[0].tool_calls[0].extra": "unknown field",
                "messages[0].tool_calls[0].function.z": "unknown field",
                "messages[0].tool_calls[0].function.name": "required: a non-empty string",
                "messages[0].tool_calls[0].function.arguments": "required: the arguments as a JSON string",
            },
        ),
        (
            _calls({"id": "c", "type": "function", "function": {"name": "n" * 257, "arguments": "{}"}}),
            {"messages[0].tool_calls[0].function.name": "required: a non-empty string"},
        ),
        (
            _calls(*[{"id": "c", "type": "function", "function": F}] * 2),
            {"messages[0].tool_calls[1].id": "the same tool call id appears twice in one message"},
        ),
        (
            [{"role": "tool", "content": "r"}],
            {"messages[0].tool_call_id": "required: the id of the tool call this result answers"},
        ),
        (
            [{"role": "tool", "content": "r", "tool_call_id": "c" * 513}],
            {"messages[0].tool_call_id": "required: the id of the tool call this result answers"},
        ),
        (
            [{"role": "user", "content": "a", "message_id": "bad id!"}],
            {"messages[0].message_id": "must match ^[A-Za-z0-9][A-Za-z0-9_.:\\-]{0,119}$"},
        ),
        (
            [
                {"role": "user", "content": "a", "message_id": "m1"},
                {"role": "user", "content": "b", "message_id": "m1"},
            ],
            {"messages[1].message_id": "the same message_id appears twice in one request"},
        ),
        (
            [{"role": "user", "content": "a", "timestamp": "nope"}],
            {"messages[0].timestamp": "must be an ISO-8601 time"},
        ),
        (
            [{"role": "user", "content": "a", "timestamp": 5}],
            {"messages[0].timestamp": "must be an ISO-8601 time"},
        ),
        (
            [{"role": "user", "content": "a\x00"}],
            {"messages[0].content": "text may not contain the NUL character"},
        ),
    ],
)
def test_a_malformed_message_is_named_exactly(messages, details) -> None:
    assert _details(messages) == details


def test_the_text_limit_is_exact() -> None:
    assert _details([{"role": "user", "content": "x" * 21}], text_chars=20) == {
        "messages[0]": "text over the limit of 20 characters"
    }
    assert len(_parse([{"role": "user", "content": "x" * 20}], text_chars=20)) == 1


def test_what_passes_keeps_its_id_and_gets_a_utc_time() -> None:
    ok = _parse(
        [
            {"role": "user", "content": "a", "timestamp": "2026-05-01T12:00:00+02:00", "message_id": "m1"},
            {"role": "assistant", "content": None, "refusal": "no", "message_id": "m2"},
            {"role": "system", "content": "s", "name": "n" * 256},
        ]
    )
    assert [(m.message_id, m.timestamp) for m in ok[:2]] == [
        ("m1", "2026-05-01T10:00:00.000000Z"),
        ("m2", "2026-01-01T00:00:00Z"),
    ]
    assert ok[0].message == {"role": "user", "content": "a"}
    assert len(ok[2].message_id) == 36 and ok[2].timestamp == "2026-01-01T00:00:00Z"
