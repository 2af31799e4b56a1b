"""What a custom strategy may return (pure): indices from 0 to len-1 or messages of the input;
anything else is a StrategyError that says which item, under ``result``."""

from __future__ import annotations

import pytest

from compaction.strategies import StrategyError, apply_strategy, sliding_window, unit_starts
from timeline_app.rendering.settings import SettingsError, validate_overrides

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
