"""What a custom strategy may return (pure): indices from 0 to len-1 or messages of the input;
anything else is a StrategyError that says which item, under ``result``."""

from __future__ import annotations

import pytest

from compaction.strategies import (
    StrategyError,
    apply_strategy,
    normalize_strategy,
    sliding_window,
    unit_starts,
)
from timeline_app.domain.settings import SettingsError, validate_overrides

MESSAGES = [
    {"role": "user", "content": "a", "message_id": "m0"},
    {"role": "assistant", "content": "b", "message_id": "m1"},
    {"role": "user", "content": "c", "message_id": "m2"},
]


def _apply(result):
    return apply_strategy(MESSAGES, {"name": "mine"}, custom={"mine": lambda messages: result})


def test_the_first_and_the_last_index_and_messages_by_id_are_kept() -> None:
    assert _apply([0, 2]) == [0, 2]
    assert _apply([{"message_id": "m1"}]) == [1]


@pytest.mark.parametrize("item", [3, -1, True, "m1", {"message_id": "nope"}])
def test_anything_else_is_an_error_naming_the_item(item) -> None:
    with pytest.raises(StrategyError) as caught:
        _apply([item])
    detail = f"not an index or a message of the input: {item!r}"
    assert caught.value.details == {"result": detail}
    assert str(caught.value) == f"result: {detail}"


def test_an_unknown_strategy_names_it() -> None:
    with pytest.raises(StrategyError) as caught:
        apply_strategy(MESSAGES, {"name": "ghost"})
    assert str(caught.value) == "name: unknown strategy 'ghost'"


def test_a_settings_error_message_joins_every_problem() -> None:
    with pytest.raises(SettingsError) as caught:
        validate_overrides({"bogus": 1, "other": 2})
    assert str(caught.value) == "; ".join(f"{k}: {v}" for k, v in caught.value.details.items())
    assert len(caught.value.details) == 2


def test_only_an_assistants_string_call_ids_open_a_tool_group() -> None:
    calls = [{"role": "assistant", "tool_calls": ["junk", {"id": 5}, {"id": "c1"}]}]
    assert unit_starts([*calls, {"role": "user"}, {"role": "tool", "tool_call_id": "c1"}]) == [
        True,
        False,
        False,
    ]
    user_calls = [{"role": "user", "tool_calls": [{"id": "c1"}]}]
    assert unit_starts([*user_calls, {"role": "user"}, {"role": "tool", "tool_call_id": "c1"}]) == [
        True,
        True,
        False,
    ]


def test_sliding_window_does_not_count_the_system_messages_it_keeps() -> None:
    messages = [{"role": "user"}, {"role": "system"}, {"role": "user"}, {"role": "system"}]
    assert sliding_window(messages, window_size=3) == [1, 2, 3]


def test_counts_up_to_a_million_and_not_one_more() -> None:
    assert (
        normalize_strategy({"name": "truncate_oldest", "max_messages": 1_000_000})["max_messages"]
        == 1_000_000
    )
    for bad in (0, 1_000_001, True, "3"):
        with pytest.raises(StrategyError) as caught:
            normalize_strategy({"name": "truncate_oldest", "max_messages": bad})
        assert caught.value.details == {"max_messages": "must be an integer between 1 and 1000000"}


SYSTEM_FIRST = [{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "user"}]


def test_apply_strategy_defaults_and_parameters() -> None:
    assert apply_strategy(SYSTEM_FIRST, {}) == [0, 1, 2, 3]  # no name: summarize shows everything
    # sliding_window keeps the system message by default, and not when told so.
    assert apply_strategy(SYSTEM_FIRST, {"name": "sliding_window", "window_size": 2}) == [0, 3]
    assert apply_strategy(
        SYSTEM_FIRST, {"name": "sliding_window", "window_size": 2, "keep_system": False}
    ) == [2, 3]


def test_a_custom_strategy_gets_its_parameters_and_deep_copies() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "user", "content": "b"},
    ]
    seen = {}

    def mine(copies, *, last):
        copies[0]["content"][0]["text"] = "changed"
        seen["last"] = last
        return [len(copies) - last]

    assert apply_strategy(messages, {"name": "mine", "last": 1}, custom={"mine": mine}) == [1]
    assert seen == {"last": 1}
    assert messages[0]["content"][0]["text"] == "a"


def test_a_tool_message_without_a_string_call_id_spans_back_one_message() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "c1"}]},
        {"role": "user"},
        {"role": "tool", "tool_call_id": 5},
        {"role": "user"},
    ]
    assert unit_starts(messages) == [True, True, False, True]
