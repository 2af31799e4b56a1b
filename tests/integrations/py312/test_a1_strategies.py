"""a1's ``Compact`` strategies run in the service: the runtime's strategy becomes each context's
``compaction_strategy``, and after ``runtime.execute`` (where a1 calls ``compact``) the contexts
hold the service's view."""

from __future__ import annotations

import asyncio

import pytest
from a1 import Strategy, get_context, set_runtime, set_strategy, tool
from a1.context import BaseCompact, Compact, SlidingWindowCompact, SummarizationCompact
from timeline_client import Context as ServiceContext
from timeline_client.a1 import ServiceStrategy, TimelineRuntime, TruncateOldest, strategy_config


@tool(name="add", description="Add two numbers")
async def add(a: int, b: int) -> int:
    return a + b


class KeepErrors(Compact):
    def compact(self, contexts):
        return contexts


def test_every_a1_strategy_maps_to_a_service_strategy():
    assert strategy_config(BaseCompact()) == {"name": "summarize"}
    assert strategy_config(SummarizationCompact(max_messages=20, keep_recent=5)) == {"name": "summarize"}
    assert strategy_config(SlidingWindowCompact(window_size=4, keep_system=False)) == {
        "name": "sliding_window",
        "window_size": 4,
        "keep_system": False,
    }
    assert strategy_config(TruncateOldest(max_messages=100)) == {
        "name": "truncate_oldest",
        "max_messages": 100,
    }
    assert strategy_config(ServiceStrategy("keep_errors", limit=3)) == {"name": "keep_errors", "limit": 3}


def test_a_strategy_of_its_own_does_not_map():
    with pytest.raises(TypeError, match="ServiceStrategy"):
        strategy_config(KeepErrors())

    class Wider(SlidingWindowCompact):  # a subclass may compact differently: no silent mapping
        pass

    with pytest.raises(TypeError):
        strategy_config(Wider())


def test_the_runtime_strategy_is_every_context_strategy(client, conversation, tmp_path):
    runtime = TimelineRuntime(
        client, conversation, compact=SlidingWindowCompact(window_size=3), cache_dir=str(tmp_path)
    )
    set_runtime(runtime)
    get_context("main").user("one")
    assert ServiceContext(client, conversation, "main").info()["compaction_strategy"] == {
        "name": "sliding_window",
        "window_size": 3,
        "keep_system": True,
    }
    set_strategy(Strategy(compact=TruncateOldest(max_messages=2)))
    assert ServiceContext(client, conversation, "main").info()["compaction_strategy"] == {
        "name": "truncate_oldest",
        "max_messages": 2,
    }
    assert isinstance(runtime.compact.strategy, TruncateOldest)


def test_execute_stores_the_tool_call_and_compaction_reads_the_view_back(client, conversation, tmp_path):
    runtime = TimelineRuntime(
        client, conversation, compact=TruncateOldest(max_messages=3), cache_dir=str(tmp_path)
    )
    set_runtime(runtime)
    ctx = get_context("main")
    for text in ("one", "two", "three"):
        ctx.user(text)
    assert asyncio.run(runtime.execute(add, a=2, b=2)) == 4

    # a1 appended the call and its result, then called compact(): the view is the newest 3 messages,
    # the call and its result together (the service never separates them).
    roles = [(m.role, m.content) for m in runtime.CTX["main"]]
    assert roles == [("user", "three"), ("assistant", ""), ("tool", "4")]
    call, result = runtime.CTX["main"].messages[1:]
    assert call.tool_calls[0]["function"]["name"] == "add"
    assert result.tool_call_id == call.tool_calls[0]["id"]
    info = ServiceContext(client, conversation, "main").info()
    assert (info["message_count"], info["stored_message_count"]) == (3, 5), "nothing stored is deleted"

    runtime.CTX["main"].user("four")  # the next append follows the view, no rewrite
    assert [m.content for m in TimelineRuntime(client, conversation).CTX["main"]] == ["", "4", "four"]


def test_a_restored_runtime_without_a_strategy_keeps_the_service_one(client, conversation):
    TimelineRuntime(client, conversation, compact=TruncateOldest(max_messages=2)).CTX["main"] = get_ctx()
    TimelineRuntime(client, conversation)
    assert (
        ServiceContext(client, conversation, "main").info()["compaction_strategy"]["name"]
        == "truncate_oldest"
    )


def get_ctx():
    from a1 import Context

    ctx = Context()
    ctx.user("hello")
    return ctx
