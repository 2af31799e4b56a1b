"""a1's own tests/test_context_persistence.py, ported to ``TimelineRuntime``: where a1 writes a JSON file
with ``Context.from_file(path, keep_updated=True)`` and reads it back, here one process writes through
a1's ``Context`` methods and another (a fresh runtime for the same conversation) reads the service."""

from __future__ import annotations

import json
from datetime import datetime

from a1 import Context, Message, get_context, set_runtime
from a1 import Runtime as A1Runtime
from timeline_client import Context as ServiceContext
from timeline_client import TimelineClient
from timeline_client.a1 import TimelineRuntime

from .conftest import dumped, in_other_process


def fresh(client: TimelineClient, conversation: str) -> TimelineRuntime:
    runtime = TimelineRuntime(client, conversation)
    set_runtime(runtime)
    return runtime


def test_a_new_conversation_starts_with_no_context(client, conversation):
    runtime = fresh(client, conversation)
    assert len(runtime.CTX) == 0
    assert len(get_context("main")) == 0
    assert list(runtime.CTX) == ["main"], "get_context creates the context, as a1 does"


def test_a_fresh_runtime_restores_what_another_process_wrote(client, conversation):
    out = in_other_process(
        conversation,
        """
        ctx = get_context("main")
        ctx.user("Hello")
        ctx.assistant("Hi there")
        dump(ctx.messages)
        """,
    )
    written = dumped(out)
    runtime = fresh(client, conversation)
    ctx = get_context("main")
    assert len(ctx) == 2
    assert [(m.role, m.content) for m in ctx] == [("user", "Hello"), ("assistant", "Hi there")]
    assert [m.message_id for m in ctx] == [m["message_id"] for m in written]
    assert [m.timestamp for m in ctx] == [datetime.fromisoformat(m["timestamp"]) for m in written]
    assert all(isinstance(m, Message) for m in runtime.CTX["main"].messages)


def test_every_append_is_stored_at_once(client, conversation):
    fresh(client, conversation)
    ctx = get_context("main")
    ctx.user("Hello")
    stored = ServiceContext(client, conversation, "main").messages
    assert [(m.role, m.content) for m in stored] == [("user", "Hello")]
    ctx.assistant("Hi there")
    ctx.user("How are you?")
    stored = ServiceContext(client, conversation, "main").messages
    assert [m.content for m in stored] == ["Hello", "Hi there", "How are you?"]
    assert [m.message_id for m in stored] == [m.message_id for m in ctx]


def test_extend_is_stored(client, conversation):
    fresh(client, conversation)
    get_context("main").extend(
        [Message(role="user", content="Hello"), Message(role="assistant", content="Hi")]
    )
    out = in_other_process(conversation, 'dump(get_context("main").messages)')
    assert [m["content"] for m in dumped(out)] == ["Hello", "Hi"]


def test_clear_empties_the_view_and_keeps_the_messages_stored(client, conversation):
    in_other_process(
        conversation,
        """
        ctx = get_context("main")
        ctx.user("Hello")
        ctx.assistant("Hi")
        ctx.clear()
        ctx.user("After the clear")
        """,
    )
    fresh(client, conversation)
    assert [m.content for m in get_context("main")] == ["After the clear"]
    info = ServiceContext(client, conversation, "main").info()
    assert (info["message_count"], info["stored_message_count"]) == (1, 3)


def test_tool_calls_persist_in_the_flat_form_a1_writes(client, conversation):
    in_other_process(
        conversation,
        """
        ctx = get_context("main")
        ctx.assistant("", tool_calls=[{"id": "1", "name": "calc", "arguments": "{}"}])
        ctx.tool("42", name="calc", tool_call_id="1")
        """,
    )
    fresh(client, conversation)
    call, result = get_context("main").messages
    assert call.tool_calls == [
        {"id": "1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}
    ]
    assert (result.role, result.content, result.name, result.tool_call_id) == ("tool", "42", "calc", "1")


def test_a_context_reloaded_sees_what_another_process_appended(client, conversation):
    runtime = fresh(client, conversation)
    get_context("main").user("Hello")
    out = in_other_process(conversation, 'get_context("main").user("From the other process"); dump([])')
    assert out
    assert [m.content for m in get_context("main")] == ["Hello"], "nothing is re-read behind a1's back"
    runtime.reload()
    assert [m.content for m in get_context("main")] == ["Hello", "From the other process"]


def test_a_retried_write_stores_nothing_twice(client, conversation):
    fresh(client, conversation)
    ctx = get_context("main")
    ctx.user("Hello")
    again = Message(**ctx.messages[0].model_dump())
    other = TimelineRuntime(client, conversation)
    other.CTX["main"].messages.clear()
    other._stored["main"] = []
    other.CTX["main"].append(again)  # the same message id sent again (a retry after a lost answer)
    info = ServiceContext(client, conversation, "main").info()
    assert info["stored_message_count"] == 1


def test_a1_context_from_file_keeps_its_file_and_moves_into_the_service(client, conversation, tmp_path):
    path = tmp_path / "sub" / "conversation.json"
    ctx = Context.from_file(str(path), keep_updated=True)
    ctx.user("Hello")  # a1 alone: written to the file
    runtime = fresh(client, conversation)
    runtime.CTX["main"] = ctx
    ctx.assistant("Hi there")
    assert [m["content"] for m in json.loads(path.read_text())] == ["Hello", "Hi there"]
    out = in_other_process(conversation, 'dump(get_context("main").messages)')
    assert [m["content"] for m in dumped(out)] == ["Hello", "Hi there"]


def test_an_a1_runtime_file_is_imported_once(client, conversation, tmp_path):
    path = tmp_path / "runtime.json"
    with A1Runtime.from_file(str(path), keep_updated=True, cache_dir=str(tmp_path / ".a1")):
        get_context("main").user("Main message")
        get_context("secondary").user("Secondary message")
    saved = json.loads(path.read_text())

    runtime = TimelineRuntime.from_file(str(path), client=client, conversation_id=conversation)
    again = TimelineRuntime.from_file(str(path), client=client, conversation_id=conversation)
    for restored in (runtime, again):
        assert sorted(dict.keys(restored.CTX)) == ["main", "secondary"]
        assert restored.CTX["main"].messages[0].message_id == saved["contexts"]["main"][0]["message_id"]
    assert ServiceContext(client, conversation, "main").info()["stored_message_count"] == 1

    with TimelineRuntime.from_file(str(path), True, client=client, conversation_id=conversation):
        get_context("main").assistant("Hi")
    assert [m["content"] for m in json.loads(path.read_text())["contexts"]["main"]] == ["Main message", "Hi"]
