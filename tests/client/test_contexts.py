"""The Python client's contexts (seed 004 API) through the WSGI transport, and docs/examples/contexts.py."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from timeline_client import (
    Context,
    Message,
    TimelineAPIError,
    Transport,
    get_context,
    get_full_context,
    list_contexts,
    new_context,
)

from timeline_app.models import Block

pytestmark = pytest.mark.django_db
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "contexts.py"


@pytest.fixture
def conv(api) -> str:
    return api.create_conversation(id="chat")["id"]


def test_get_context_appends_every_role_and_reads_back_messages(api, conv):
    ctx = get_context(api, conv)
    assert len(ctx) == 0 and list(ctx) == [], "a context with no message yet is empty"
    ctx.system("You are a calculator")
    ctx.user("What is 2+2?")
    call = ctx.assistant("", tool_calls=[{"function": {"name": "calculator", "arguments": {"a": 2, "b": 2}}}])
    (tool_call,) = call.tool_calls
    assert tool_call["type"] == "function" and tool_call["id"].startswith("call_")
    assert tool_call["function"]["arguments"] == '{"a": 2, "b": 2}'
    ctx.tool({"result": 4}, name="calculator", tool_call_id=tool_call["id"])
    ctx.assistant("4")
    assert len(ctx) == 5
    messages = list(ctx)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[3].content == '{"result": 4}' and messages[3].tool_call_id == tool_call["id"]
    assert all(
        isinstance(m, Message) and isinstance(m.timestamp, datetime) and m.message_id for m in messages
    )
    assert ctx[-1].content == "4"
    assert ctx.to_openai()[1] == {"role": "user", "content": "What is 2+2?"}
    with pytest.raises(ValueError):
        ctx.tool("x", name="calculator")


def test_a_plain_transport_works_too_and_errors_raise(owner, wsgi_http, conv):
    transport = Transport("http://testserver", owner.raw_key, client=wsgi_http)
    ctx = get_context(transport, conv, "plain")
    ctx.user("hi")
    assert [m.content for m in get_context(transport, conv, "plain")] == ["hi"]
    with pytest.raises(TimelineAPIError) as caught:
        ctx.append({"role": "robot", "content": "x"})
    assert caught.value.status == 400 and "messages[0].role" in caught.value.details
    with pytest.raises(TimelineAPIError) as caught:
        len(get_context(transport, "no-such-conversation"))
    assert caught.value.status == 404
    with pytest.raises(TypeError):
        get_context(object(), conv)


def test_clear_empties_the_view_and_the_service_keeps_the_messages(api, conv):
    ctx = get_context(api, conv, "scratch")
    ctx.clear()  # nothing to clear yet: no error
    ctx.user("one")
    ctx.user("two")
    ctx.clear()
    assert len(ctx) == 0
    assert Block.objects.filter(timeline__name="scratch").count() == 2


def test_new_context_names_by_label_and_full_context_merges_by_label(api, conv):
    main = get_context(api, conv)
    main.user("main question")
    first = new_context(api, conv, "attempt")
    second = new_context(api, conv, "attempt", branch_from="main")
    assert (first.name, second.name) == ("attempt_a", "attempt_b")
    first.user("try A")
    second.user("try B")
    attempts = get_full_context(api, conv, "attempt")
    assert [m.content for m in attempts] == ["main question", "try A", "try B"]
    assert [m.content for m in get_full_context(api, conv, ["main"])] == ["main question"]
    assert len(get_full_context(api, conv)) == 3, "the branched copy of main's message shows once"
    counts = {c["name"]: c["message_count"] for c in list_contexts(api, conv)}
    assert counts == {"main": 1, "attempt_a": 1, "attempt_b": 2}


def test_set_strategy_changes_the_view_not_the_store(api, conv):
    ctx = get_context(api, conv)
    ctx.extend({"role": "user", "content": str(i)} for i in range(5))
    info = ctx.set_strategy("truncate_oldest", max_messages=2)
    assert info["message_count"] == 2 and info["stored_message_count"] == 5
    assert [m.content for m in ctx] == ["3", "4"]
    ctx.set_strategy("summarize")
    assert len(ctx) == 5
    rendered = ctx.render(format="openai")["blocks"]
    assert rendered == [{"role": "user", "content": str(i)} for i in range(5)]


def test_to_file_and_from_file_round_trip_with_the_same_ids(api, conv, tmp_path):
    ctx = get_context(api, conv)
    ctx.user("Hello")
    ctx.assistant("Hi there")
    path = ctx.to_file(tmp_path / "conversation.json")
    saved = json.loads(path.read_text())
    assert [m["content"] for m in saved] == ["Hello", "Hi there"] and all("message_id" in m for m in saved)

    copy = Context.from_file(path, api, conv, "copy")
    assert [m.to_dict() for m in copy] == saved, "same messages, same ids and timestamps"
    Context.from_file(path, api, conv, "copy")
    assert len(copy) == 2, "importing the same file again stores nothing twice"


def test_from_file_keep_updated_mirrors_every_later_change_at_once(api, conv, tmp_path):
    path = tmp_path / "live.json"
    seed_style = [  # what the seed's model_dump() writes: every field, unused ones null
        {"role": "user", "content": "Hello", "name": None, "tool_calls": None, "tool_call_id": None,
         "timestamp": "2026-02-09T02:14:32.676425", "message_id": "9c3e1a52-1111-4aaa-8bbb-000000000001"},
    ]  # fmt: skip
    path.write_text(json.dumps(seed_style))
    ctx = Context.from_file(path, api, conv, "live", keep_updated=True)
    assert [m.content for m in ctx] == ["Hello"]
    ctx.assistant("Hi there")
    on_disk = json.loads(path.read_text())
    assert [m["content"] for m in on_disk] == ["Hello", "Hi there"]
    assert on_disk[0]["timestamp"] == "2026-02-09T02:14:32.676425Z"
    assert [m.content for m in get_context(api, conv, "live")] == ["Hello", "Hi there"], (
        "on the service at once"
    )
    ctx.clear()
    assert json.loads(path.read_text()) == []

    fresh = Context.from_file(tmp_path / "new.json", api, conv, "fresh", keep_updated=True)
    fresh.user("first")
    assert [m["content"] for m in json.loads((tmp_path / "new.json").read_text())] == ["first"]


def test_the_contexts_example_runs_as_written(owner, in_process_requests, monkeypatch, tmp_path, capsys):
    real_client = httpx.Client
    app = in_process_requests
    monkeypatch.setattr(
        httpx, "Client", lambda **kwargs: real_client(transport=httpx.WSGITransport(app=app), **kwargs)
    )
    monkeypatch.setenv("TIMELINE_API_KEY", owner.raw_key)
    monkeypatch.chdir(tmp_path)

    namespace: dict = {}
    exec(compile(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE), "exec"), namespace)

    out = capsys.readouterr().out
    assert "Total messages: 2" in out and "user: What is 2+2?" in out and "assistant: 4" in out
    assert "All: 8, attempts: 2, main + intermediate: 6" in out
    assert "Restored 6 messages" in out
    assert "After clear: 0 messages" in out
    assert [a.name for a in (namespace["attempt"], namespace["attempt2"], namespace["intermediate"])] == [
        "attempt_a",
        "attempt_b",
        "intermediate_a",
    ]
    saved = json.loads((tmp_path / "conversation.json").read_text())
    assert [m["content"] for m in saved][-1] == "Hello"
