"""a1's tests/test_runtime_persistence.py, ported to ``TimelineRuntime``: a runtime with several
contexts written in one process is restored whole by a fresh runtime in another."""

from __future__ import annotations

from a1 import get_context, set_runtime
from timeline_client.a1 import TimelineRuntime

from .conftest import dumped, in_other_process


def test_multiple_contexts_are_restored(client, conversation):
    in_other_process(
        conversation,
        """
        get_context("main").user("Main message")
        get_context("secondary").user("Secondary message")
        """,
    )
    with TimelineRuntime(client, conversation) as runtime:
        assert "main" in runtime.CTX
        assert "secondary" in runtime.CTX
        assert runtime.CTX["main"].messages[0].content == "Main message"
        assert runtime.CTX["secondary"].messages[0].content == "Secondary message"


def test_a_session_is_reloaded_in_order(client, conversation):
    with TimelineRuntime(client, conversation):
        ctx = get_context("main")
        ctx.user("Hello")
        ctx.assistant("Hi there")
        ctx.user("How are you?")
    out = in_other_process(conversation, 'dump(get_context("main").messages)')
    messages = dumped(out)
    assert len(messages) == 3
    assert [m["content"] for m in messages] == ["Hello", "Hi there", "How are you?"]
    assert [m["message_id"] for m in messages] == [m.message_id for m in ctx.messages]


def test_tool_calls_survive_a_reload(client, conversation):
    in_other_process(
        conversation,
        """
        ctx = get_context("main")
        ctx.assistant("", tool_calls=[{"id": "1", "name": "calc", "arguments": "{}"}])
        ctx.tool("42", name="calc", tool_call_id="1")
        """,
    )
    set_runtime(TimelineRuntime(client, conversation))
    ctx = get_context("main")
    assert len(ctx.messages) == 2
    assert ctx.messages[0].tool_calls is not None
    assert ctx.messages[1].name == "calc"


def test_a_context_created_elsewhere_after_start_is_found_by_name(client, conversation):
    runtime = TimelineRuntime(client, conversation)
    set_runtime(runtime)
    get_context("main").user("Hello")
    in_other_process(conversation, 'get_context("analysis").user("Analyze data B")')
    assert [m.content for m in get_context("analysis")] == ["Analyze data B"]
    assert sorted(runtime.CTX) == ["analysis", "main"]
