"""Compaction strategies: the view shrinks, tool groups stay whole, the stored history stays complete."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from compaction import strategies as s
from timeline_app import selectors
from timeline_app.models import Block, Timeline
from timeline_app.selectors.contexts import strategy_window

from .conftest import BASE, messages_url
from .generators import message_lists
from .test_messages_api import without_added
from .test_render_context import assert_every_tool_message_follows_its_call, tool_round

CUSTOM = {
    "users_only": "tests.api.contexts.custom_strategies.users_only",
    "tool_results": "tests.api.contexts.custom_strategies.every_tool_result",
    "broken": "tests.api.contexts.custom_strategies.broken",
}


# ---------------------------------------------------------------- pure


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def system(text: str) -> dict:
    return {"role": "system", "content": text}


def calls(*ids: str) -> dict:
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


def result(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def assert_groups_whole(messages: list[dict], kept: list[int]) -> None:
    kept_set = set(kept)
    for j in kept:
        if messages[j]["role"] == "tool":
            makers = [
                k
                for k in range(j)
                if result(messages[j]["tool_call_id"])["tool_call_id"] in s._call_ids(messages[k])
            ]
            if makers:
                assert makers[-1] in kept_set, f"tool result {j} kept without its call {makers[-1]}"
    for k in kept:
        for j in range(k + 1, len(messages)):
            if messages[j]["role"] == "tool" and messages[j]["tool_call_id"] in s._call_ids(messages[k]):
                later = [
                    m for m in range(k + 1, j) if messages[j]["tool_call_id"] in s._call_ids(messages[m])
                ]
                if not later:
                    assert j in kept_set, f"call {k} kept without its result {j}"


def test_a_view_never_starts_inside_a_tool_group():
    messages = [user("q"), calls("a", "b"), result("a"), result("b"), user("next")]
    assert s.unit_starts(messages) == [True, True, False, False, True]
    assert [list(u) for u in s.units(messages)] == [[0], [1, 2, 3], [4]]


def test_truncate_oldest_moves_the_cut_forward_to_the_next_whole_group():
    messages = [user("q"), calls("a", "b"), result("a"), result("b"), user("next"), user("last")]
    assert s.truncate_oldest(messages, max_messages=4) == [4, 5], "the group [1..3] would be split"
    assert s.truncate_oldest(messages, max_messages=5) == [1, 2, 3, 4, 5]
    assert s.truncate_oldest(messages, max_messages=100) == list(range(6))


def test_the_newest_group_stays_whole_even_over_the_budget():
    messages = [user("q"), calls("a", "b", "c"), result("a"), result("b"), result("c")]
    assert s.truncate_oldest(messages, max_messages=2) == [1, 2, 3, 4]
    assert s.sliding_window(messages, window_size=1, keep_system=False) == [1, 2, 3, 4]


def test_sliding_window_keeps_older_system_messages_when_asked():
    messages = [system("rules"), user("1"), user("2"), system("more rules"), user("3"), user("4")]
    assert s.sliding_window(messages, window_size=4, keep_system=True) == [0, 3, 4, 5]
    assert s.sliding_window(messages, window_size=2, keep_system=False) == [4, 5]


def test_sliding_window_size_counts_the_kept_system_messages():
    messages = [system("rules"), *(user(str(k)) for k in range(1, 7))]
    # a1's SlidingWindowCompact: the system messages plus the last N - #system others
    assert s.sliding_window(messages, window_size=4, keep_system=True) == [0, 4, 5, 6]
    interleaved = [system("rules"), user("1"), user("2"), system("more rules"), user("3"), user("4")]
    assert s.sliding_window(interleaved, window_size=3, keep_system=True) == [0, 3, 5]
    assert s.sliding_window(messages, window_size=7, keep_system=True) == list(range(7))


def test_sliding_window_with_system_messages_never_splits_a_tool_group():
    messages = [system("rules"), user("q"), calls("a", "b"), result("a"), result("b"), user("next")]
    # 3 others fit: the group [2..4] would be split, so the view starts after it (fewer than N)
    assert s.sliding_window(messages, window_size=4, keep_system=True) == [0, 5]
    assert s.sliding_window(messages, window_size=5, keep_system=True) == [0, 2, 3, 4, 5]
    # the system messages alone fill the window: the newest group is kept whole anyway
    tail_group = [system("a"), system("b"), user("q"), calls("c"), result("c")]
    assert s.sliding_window(tail_group, window_size=2, keep_system=True) == [0, 1, 3, 4]


def test_an_orphan_tool_result_sticks_to_the_message_before_it():
    messages = [user("q"), user("r"), result("unknown"), user("s")]
    assert s.truncate_oldest(messages, max_messages=2) == [3]


def test_custom_results_are_widened_to_whole_groups():
    messages = [user("q"), calls("a"), result("a"), user("s")]
    with_ids = [{**m, "message_id": f"m{i}"} for i, m in enumerate(messages)]
    assert s.apply_strategy(with_ids, {"name": "x"}, custom={"x": lambda ms: [2]}) == [1, 2]
    assert s.apply_strategy(with_ids, {"name": "x"}, custom={"x": lambda ms: [ms[3]]}) == [3]
    with pytest.raises(s.StrategyError):
        s.apply_strategy(with_ids, {"name": "x"}, custom={"x": lambda ms: [99]})


@given(
    messages=message_lists(max_groups=12),
    budget=st.integers(min_value=1, max_value=20),
    keep_system=st.booleans(),
)
def test_no_strategy_ever_separates_a_call_from_its_results(messages, budget, keep_system):
    n = len(messages)
    for kept in (
        s.truncate_oldest(messages, max_messages=budget),
        s.sliding_window(messages, window_size=budget, keep_system=keep_system),
    ):
        assert kept == sorted(set(kept)) and all(0 <= i < n for i in kept)
        assert n - 1 in kept, "the newest message is always in the view"
        assert messages[kept[0]]["role"] != "tool"
        assert_groups_whole(messages, kept)
        assert_every_tool_message_follows_its_call([messages[i] for i in kept])
    truncated = s.truncate_oldest(messages, max_messages=budget)
    last_unit = s.units(messages)[-1]
    assert len(truncated) <= budget or truncated == list(last_unit)
    assert truncated == list(range(truncated[0], n)), "truncate_oldest keeps a suffix"


@pytest.mark.parametrize(
    ("raw", "error_key"),
    [
        ("truncate_oldest", "compaction_strategy"),
        ({"name": "nope"}, "name"),
        ({"max_messages": 3}, "name"),
        ({"name": "truncate_oldest"}, "max_messages"),
        ({"name": "truncate_oldest", "max_messages": 0}, "max_messages"),
        ({"name": "truncate_oldest", "max_messages": "100"}, "max_messages"),
        ({"name": "truncate_oldest", "max_messages": True}, "max_messages"),
        ({"name": "truncate_oldest", "max_messages": 5, "window_size": 3}, "window_size"),
        ({"name": "sliding_window", "window_size": 3, "keep_system": "yes"}, "keep_system"),
        ({"name": "summarize", "max_messages": 3}, "max_messages"),
    ],
)
def test_invalid_strategy_configs_name_the_problem(raw, error_key):
    with pytest.raises(s.StrategyError) as caught:
        s.normalize_strategy(raw)
    assert error_key in caught.value.details


def test_strategy_configs_are_normalised():
    assert s.normalize_strategy({}) == {"name": "summarize"}
    assert s.normalize_strategy({"name": "sliding_window", "window_size": 5}) == {
        "name": "sliding_window",
        "window_size": 5,
        "keep_system": True,
    }
    assert s.normalize_strategy({"name": "mine", "keep": 2}, custom_names={"mine"}) == {
        "name": "mine",
        "keep": 2,
    }


# ---------------------------------------------------------------- through the API


def set_strategy(caller, context: str, strategy: dict):
    return caller.client.put(f"{BASE}/contexts/{context}/", {"compaction_strategy": strategy}, format="json")


def listed(caller, context: str = "main") -> list[dict]:
    return caller.get(messages_url(context)).json()["messages"]


@pytest.mark.django_db
def test_truncate_oldest_100_on_250_messages_keeps_the_newest_100_with_tool_pairs_whole(owner, conversation):
    messages = [m for i in range(50) for m in tool_round(i)]  # 250 messages, tool pairs throughout
    assert len(messages) == 250
    owner.post(messages_url(), {"messages": messages})
    response = set_strategy(owner, "main", {"name": "truncate_oldest", "max_messages": 100})
    assert response.status_code == 200
    assert response.json()["compaction_strategy"] == {"name": "truncate_oldest", "max_messages": 100}
    assert (response.json()["message_count"], response.json()["stored_message_count"]) == (100, 250)

    view = listed(owner)
    assert without_added(view) == messages[-100:]
    assert_every_tool_message_follows_its_call(without_added(view))
    assert Block.objects.filter(timeline__name="main").count() == 250, "the stored history is complete"

    # Shifted by two messages the cut would fall inside a tool group: it moves to the next whole one.
    owner.post(
        messages_url(), {"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}
    )
    shifted = without_added(listed(owner))
    assert 95 <= len(shifted) <= 100 and shifted[0]["role"] != "tool"
    assert_every_tool_message_follows_its_call(shifted)
    assert shifted[-2:] == [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]

    set_strategy(owner, "main", {"name": "summarize"})
    assert len(listed(owner)) == 252, "going back to summarize shows everything again: nothing was deleted"


@pytest.mark.django_db
def test_sliding_window_keeps_the_system_prompt_in_view(owner, conversation):
    messages = [system("You are a calculator"), *[m for i in range(6) for m in tool_round(i)]]
    owner.post(messages_url("calc"), {"messages": messages})
    set_strategy(owner, "calc", {"name": "sliding_window", "window_size": 10, "keep_system": True})
    view = without_added(listed(owner, "calc"))
    # the window of 10 counts the system prompt: it and the last 9 others
    assert view == [messages[0], *messages[-9:]]


@pytest.mark.django_db
@override_settings(TIMELINE_CUSTOM_STRATEGIES=CUSTOM)
def test_a_custom_strategy_named_in_settings_is_used(owner, conversation):
    messages = [m for i in range(3) for m in tool_round(i)]
    owner.post(messages_url(), {"messages": messages})
    assert set_strategy(owner, "main", {"name": "users_only", "keep": 2}).status_code == 200
    assert [m["content"] for m in listed(owner)] == ["question 1: what is 1+1?", "question 2: what is 2+2?"]

    set_strategy(owner, "main", {"name": "tool_results"})
    view = without_added(listed(owner))
    assert view == [m for m in messages if m["role"] != "user" and "answer" not in str(m["content"])]
    assert_every_tool_message_follows_its_call(view)
    assert Block.objects.filter(timeline__name="main").count() == len(messages)


@pytest.mark.django_db
@override_settings(TIMELINE_CUSTOM_STRATEGIES=CUSTOM)
def test_a_failing_custom_strategy_loses_no_message(owner, conversation, caplog):
    owner.post(messages_url(), {"messages": tool_round(1)})
    set_strategy(owner, "main", {"name": "broken"})
    with caplog.at_level(logging.ERROR):
        assert len(listed(owner)) == 5
    assert "compaction strategy 'broken' failed" in caplog.text


@pytest.mark.django_db
def test_an_unknown_or_invalid_strategy_is_a_400_and_changes_nothing(owner, conversation):
    for strategy in ({"name": "users_only"}, {"name": "truncate_oldest", "max_messages": -1}):
        response = set_strategy(owner, "newctx", strategy)
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"
    assert not Timeline.objects.filter(name="newctx").exists()
    response = owner.post(f"{BASE}/contexts/", {"label": "attempt", "compaction_strategy": {"name": "nope"}})
    assert response.status_code == 400
    assert not Timeline.objects.filter(name__startswith="attempt").exists()


@pytest.mark.django_db
def test_patch_and_creation_set_the_strategy_too(owner, conversation):
    created = owner.post(
        f"{BASE}/contexts/",
        {"label": "attempt", "compaction_strategy": {"name": "truncate_oldest", "max_messages": 2}},
    ).json()
    assert created["compaction_strategy"] == {"name": "truncate_oldest", "max_messages": 2}
    owner.post(messages_url("attempt_a"), {"messages": [user("1"), user("2"), user("3")]})
    assert [m["content"] for m in listed(owner, "attempt_a")] == ["2", "3"]
    patched = owner.client.patch(
        f"{BASE}/contexts/attempt_a/", {"compaction_strategy": {"name": "summarize"}}, format="json"
    )
    assert patched.json()["message_count"] == 3
    assert owner.client.patch(f"{BASE}/contexts/attempt_a/", {}, format="json").status_code == 200
    assert owner.client.patch(f"{BASE}/contexts/attempt_a/", {"colour": 1}, format="json").status_code == 400


@pytest.mark.django_db
def test_the_render_hook_applies_the_strategy_to_the_visible_window(owner, conversation, timeline):
    messages = [m for i in range(4) for m in tool_round(i)]
    owner.post(messages_url(), {"messages": messages})
    set_strategy(owner, "main", {"name": "truncate_oldest", "max_messages": 7})
    timeline.refresh_from_db()
    window = strategy_window(timeline=timeline, window=selectors.visible_window(timeline=timeline))
    assert [b.meta["openai_message"] for b in window] == messages[-6:], "the cut moved past a tool group"
