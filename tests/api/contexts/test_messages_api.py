"""``…/contexts/{name}/messages/``: append, list back exactly, clear, validate, scope."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings

from tests.budget import examples
from timeline_app.models import Block, Timeline

from .conftest import BASE, messages_url
from .generators import message_lists

pytestmark = pytest.mark.django_db

TOOL_PAIR = [
    {"role": "user", "content": "What is 2+2?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"a":2,"b":2}'},
            }
        ],
    },
    {"role": "tool", "content": '{"result": 4}', "name": "calculator", "tool_call_id": "call_1"},
    {"role": "assistant", "content": "4"},
]


def without_added(listed: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if k not in ("timestamp", "message_id")} for m in listed]


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=message_lists())
def test_any_valid_message_list_lists_back_equal_apart_from_timestamp_and_message_id(
    owner, conversation, messages
):
    context = f"ctx_{uuid.uuid4().hex[:12]}"
    posted = owner.post(messages_url(context), {"messages": messages})
    assert posted.status_code == 201, posted.json()
    listed = owner.get(messages_url(context)).json()["messages"]
    assert without_added(listed) == messages
    assert all(isinstance(m["message_id"], str) and m["message_id"] for m in listed)
    assert len({m["message_id"] for m in listed}) == len(listed)
    assert all(datetime.fromisoformat(m["timestamp"]).tzinfo is not None for m in listed)
    assert posted.json()["messages"] == listed


def test_messages_are_stored_one_block_each_with_types_that_keep_tool_pairs_whole(owner, conversation):
    owner.post(messages_url(), {"messages": [{"role": "system", "content": "be brief"}, *TOOL_PAIR]})
    rows = list(Block.objects.filter(timeline__name="main").order_by("seq"))
    assert [(r.type, r.author) for r in rows] == [
        ("message.system", "system"),
        ("message.user", "user"),
        ("message.assistant", "assistant"),
        ("react.tool.result", "tool"),
        ("message.assistant", "assistant"),
    ]
    assert rows[2].meta["tool_call_ids"] == ["call_1"] and rows[3].meta["tool_call_id"] == "call_1"
    assert rows[1].meta["openai_message"] == TOOL_PAIR[0], "the message exactly as given, nothing added"
    assert all(r.client_id == f"msg:{r.meta['message_id']}" for r in rows)
    assert all(r.path == f"ar:msg.{r.meta['message_id']}" for r in rows)
    assert all(r.turn_id == "" and r.tokens > 0 for r in rows)


def test_given_message_id_and_timestamp_are_kept_and_a_resend_stores_nothing_new(owner, conversation):
    message = {"role": "user", "content": "hi", "message_id": "m-1", "timestamp": "2026-02-09T03:14:32+01:00"}
    first = owner.post(messages_url(), {"messages": [message]}).json()["messages"][0]
    assert first == {
        "role": "user",
        "content": "hi",
        "message_id": "m-1",
        "timestamp": "2026-02-09T02:14:32.000000Z",
    }
    again = owner.post(messages_url(), {"messages": [message]})
    assert again.status_code == 200 and again.json()["messages"] == [first]
    assert Block.objects.count() == 1


def test_same_message_id_with_another_message_is_a_conflict_and_stores_nothing(owner, conversation):
    owner.post(messages_url(), {"messages": [{"role": "user", "content": "hi", "message_id": "m-1"}]})
    response = owner.post(
        messages_url(),
        {
            "messages": [
                {"role": "user", "content": "new"},
                {"role": "user", "content": "changed", "message_id": "m-1"},
            ]
        },
    )
    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"m-1": "stored already with a different message"}
    assert Block.objects.count() == 1


def test_main_has_a_short_path(owner, conversation):
    owner.post(f"{BASE}/messages/", {"messages": [{"role": "user", "content": "short"}]})
    listed = owner.get(messages_url("main")).json()["messages"]
    assert without_added(listed) == [{"role": "user", "content": "short"}]


def test_first_append_creates_the_context_and_reading_an_unknown_one_is_404(owner, conversation):
    assert owner.get(messages_url("fresh")).status_code == 404
    owner.post(messages_url("fresh"), {"messages": [{"role": "user", "content": "x"}]})
    assert Timeline.objects.filter(name="fresh").exists()
    assert len(owner.get(messages_url("fresh")).json()["messages"]) == 1


def test_clear_empties_the_view_but_keeps_every_message_stored(owner, conversation):
    owner.post(messages_url(), {"messages": TOOL_PAIR})
    assert owner.delete(messages_url()).status_code == 204
    assert owner.get(messages_url()).json() == {"messages": []}
    assert Block.objects.filter(timeline__name="main").count() == len(TOOL_PAIR), "stored history stays"
    owner.post(messages_url(), {"messages": [{"role": "user", "content": "after"}]})
    assert without_added(owner.get(messages_url()).json()["messages"]) == [
        {"role": "user", "content": "after"}
    ]
    render = owner.post(f"{BASE}/render/", {"format": "openai"}).json()
    assert render["blocks"] == [{"role": "user", "content": "after"}], "render shows the cleared view too"
    detail = owner.get(f"{BASE}/contexts/main/").json()
    assert (detail["message_count"], detail["stored_message_count"]) == (1, len(TOOL_PAIR) + 1)


def test_two_contexts_never_see_each_others_messages(owner, conversation):
    owner.post(messages_url("analysis"), {"messages": [{"role": "user", "content": "Analyze data B"}]})
    owner.post(messages_url("main"), {"messages": [{"role": "user", "content": "Solve problem A"}]})
    owner.post(messages_url("debug"), {"messages": [{"role": "user", "content": "Debug C"}]})
    owner.delete(messages_url("debug"))
    for name, expected in [("main", ["Solve problem A"]), ("analysis", ["Analyze data B"]), ("debug", [])]:
        assert [m["content"] for m in owner.get(messages_url(name)).json()["messages"]] == expected
    rendered = owner.post(f"{BASE}/contexts/analysis/render/", {"format": "openai"}).json()["blocks"]
    assert rendered == [{"role": "user", "content": "Analyze data B"}]


def call(call_id="c1", **function):
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}", **function}}


BAD_MESSAGES = [
    ("not a list", {"messages": {"role": "user", "content": "x"}}),
    ("empty list", {"messages": []}),
    ("missing messages", {}),
    ("unknown top-level field", {"messages": [{"role": "user", "content": "x"}], "extra": 1}),
    ("message not an object", {"messages": ["hello"]}),
    ("unknown role", {"messages": [{"role": "developer", "content": "x"}]}),
    ("missing role", {"messages": [{"content": "x"}]}),
    ("user without content", {"messages": [{"role": "user"}]}),
    ("content a number", {"messages": [{"role": "user", "content": 42}]}),
    ("content null for user", {"messages": [{"role": "user", "content": None}]}),
    ("unknown message field", {"messages": [{"role": "user", "content": "x", "colour": "red"}]}),
    ("empty parts list", {"messages": [{"role": "user", "content": []}]}),
    ("unknown part type", {"messages": [{"role": "user", "content": [{"type": "video", "video": "x"}]}]}),
    (
        "image part for system",
        {"messages": [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}]},
    ),
    (
        "bad image detail",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "max"}}],
                }
            ]
        },
    ),
    ("text part without text", {"messages": [{"role": "user", "content": [{"type": "text"}]}]}),
    ("assistant with nothing", {"messages": [{"role": "assistant", "content": None}]}),
    ("tool_calls not a list", {"messages": [{"role": "assistant", "tool_calls": {"id": "c1"}}]}),
    ("tool_calls empty", {"messages": [{"role": "assistant", "content": "x", "tool_calls": []}]}),
    (
        "tool call without id",
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
                }
            ]
        },
    ),
    (
        "tool call of another type",
        {"messages": [{"role": "assistant", "tool_calls": [{**call(), "type": "code"}]}]},
    ),
    (
        "arguments as an object",
        {"messages": [{"role": "assistant", "tool_calls": [call(arguments={"a": 1})]}]},
    ),
    ("function without name", {"messages": [{"role": "assistant", "tool_calls": [call(name="")]}]}),
    ("duplicate call ids", {"messages": [{"role": "assistant", "tool_calls": [call("c1"), call("c1")]}]}),
    ("tool without tool_call_id", {"messages": [{"role": "tool", "content": "4"}]}),
    ("tool_calls on a user", {"messages": [{"role": "user", "content": "x", "tool_calls": [call()]}]}),
    ("name not a string", {"messages": [{"role": "user", "content": "x", "name": 7}]}),
    ("NUL character", {"messages": [{"role": "user", "content": "a\x00b"}]}),
    ("bad timestamp", {"messages": [{"role": "user", "content": "x", "timestamp": "yesterday"}]}),
    ("timestamp a number", {"messages": [{"role": "user", "content": "x", "timestamp": 1700000000}]}),
    ("bad message_id", {"messages": [{"role": "user", "content": "x", "message_id": "has space"}]}),
    (
        "duplicate message_id",
        {
            "messages": [
                {"role": "user", "content": "x", "message_id": "m"},
                {"role": "user", "content": "y", "message_id": "m"},
            ]
        },
    ),
    (
        "one bad among good",
        {"messages": [{"role": "user", "content": "ok"}, {"role": "tool", "content": "4"}]},
    ),
]


@pytest.mark.parametrize(("case", "body"), BAD_MESSAGES, ids=[c for c, _ in BAD_MESSAGES])
def test_bad_input_is_a_400_in_the_error_shape_and_stores_nothing(owner, conversation, case, body):
    response = owner.post(messages_url("newctx"), body)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["message"] and error["details"]
    assert Block.objects.count() == 0
    assert not Timeline.objects.filter(name="newctx").exists(), "a rejected append creates no context"


def test_malformed_json_and_lone_surrogates_are_400(owner, conversation):
    assert owner.post_raw(messages_url(), b'{"messages": [').status_code == 400
    lone = b'{"messages": [{"role": "user", "content": "\\ud800"}]}'
    response = owner.post_raw(messages_url(), lone)
    assert response.status_code == 400
    assert "messages[0].content" in response.json()["error"]["details"]
    assert Block.objects.count() == 0


@override_settings(TIMELINE_MAX_BLOCKS_PER_REQUEST=3, TIMELINE_MAX_BLOCK_TEXT_CHARS=100)
def test_limits_on_count_and_text_are_400(owner, conversation):
    four = [{"role": "user", "content": "x"}] * 4
    assert owner.post(messages_url(), {"messages": four}).status_code == 400
    assert (
        owner.post(messages_url(), {"messages": [{"role": "user", "content": "x" * 101}]}).status_code == 400
    )
    assert Block.objects.count() == 0


def test_another_tenant_gets_404_and_no_key_gets_401(owner, outsider, anonymous, conversation):
    owner.post(messages_url(), {"messages": TOOL_PAIR})
    for method, args in [
        ("get", ()),
        ("post", ({"messages": [{"role": "user", "content": "x"}]},)),
        ("delete", ()),
    ]:
        assert getattr(outsider, method)(messages_url(), *args).status_code == 404
        assert getattr(anonymous, method)(messages_url(), *args).status_code == 401
    assert outsider.get(f"{BASE}/contexts/").status_code == 404
    assert outsider.get(f"{BASE}/full-context/").status_code == 404
    assert outsider.post(f"{BASE}/contexts/", {"label": "attempt"}).status_code == 404
    strategy = {"compaction_strategy": {"name": "truncate_oldest", "max_messages": 1}}
    assert outsider.client.patch(f"{BASE}/contexts/main/", strategy, format="json").status_code == 404
    assert outsider.get(f"{BASE}/contexts/main/").status_code == 404
    assert outsider.post(f"{BASE}/contexts/main/render/", {"format": "openai"}).status_code == 404
    assert Block.objects.count() == len(TOOL_PAIR)
    assert owner.get(messages_url()).json()["messages"][0]["content"] == "What is 2+2?"
