"""Issue 30, defect 3: every strategy over an empty context, one message and a lone tool message
answers its view without an error (``sliding_window`` over no message used to raise inside
``units`` on every read, logged as an ERROR with a traceback and answered by the fallback)."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings

from compaction import strategies as s

from .conftest import BASE, messages_url
from .test_strategies import CUSTOM, set_strategy

STRATEGIES = {
    "summarize": {"name": "summarize"},
    "truncate_oldest": {"name": "truncate_oldest", "max_messages": 1},
    "sliding_window": {"name": "sliding_window", "window_size": 1, "keep_system": True},
    "sliding_window_plain": {"name": "sliding_window", "window_size": 1, "keep_system": False},
    "custom_users_only": {"name": "users_only", "keep": 1},
    "custom_tool_results": {"name": "tool_results"},
}
PURE_CUSTOM = {
    "users_only": lambda messages, keep=2: [m for m in messages if m["role"] == "user"][-keep:],
    "tool_results": lambda messages: [i for i, m in enumerate(messages) if m["role"] == "tool"],
}
CONTEXTS = {
    "empty": [],
    "one_message": [{"role": "user", "content": "hi"}],
    "lone_tool_message": [{"role": "tool", "tool_call_id": "call_1", "content": "42"}],
}
# What each strategy keeps of each context (indices).
EXPECTED = {
    "empty": {key: [] for key in STRATEGIES},
    "one_message": {**{key: [0] for key in STRATEGIES}, "custom_tool_results": []},
    "lone_tool_message": {**{key: [0] for key in STRATEGIES}, "custom_users_only": []},
}


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_over_the_smallest_contexts(strategy, context):
    messages = [{**m, "message_id": f"m{i}"} for i, m in enumerate(CONTEXTS[context])]
    assert s.apply_strategy(messages, STRATEGIES[strategy], custom=PURE_CUSTOM) == EXPECTED[context][strategy]


def test_no_messages_are_no_units():
    assert s.units([]) == []
    assert s.widen_to_units([], []) == []


@pytest.mark.django_db
@override_settings(TIMELINE_CUSTOM_STRATEGIES=CUSTOM)
@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_reads_and_renders_of_the_smallest_contexts_log_no_error(
    owner, conversation, caplog, strategy, context
):
    assert set_strategy(owner, "ctx", STRATEGIES[strategy]).status_code in (200, 201)
    if CONTEXTS[context]:
        assert owner.post(messages_url("ctx"), {"messages": CONTEXTS[context]}).status_code == 201

    with caplog.at_level(logging.WARNING):
        listed = owner.get(messages_url("ctx"))
        detail = owner.get(f"{BASE}/contexts/ctx/")
        full = owner.get(f"{BASE}/full-context/")
        renders = [
            owner.post(f"{BASE}/contexts/ctx/render/", {"format": fmt})
            for fmt in ("text", "openai_chat", "anthropic_messages")
        ]

    assert [r.status_code for r in (listed, detail, full, *renders)] == [200] * 6
    kept = [m["content"] for m in listed.json()["messages"]]
    assert kept == [CONTEXTS[context][i]["content"] for i in EXPECTED[context][strategy]]
    assert detail.json()["message_count"] == len(kept)
    assert [r.levelname for r in caplog.records if r.levelno >= logging.ERROR] == []
