"""``Block.from_columns`` skips ``__init__`` for speed: it must build exactly what ``__init__``
builds, stay frozen, and refuse a row of the wrong width."""

import dataclasses

import pytest

from timeline_app.domain.blocks import Block

COLUMNS = (
    7,
    "react.tool.result",
    "turn_1",
    "tool",
    "2026-01-01T00:00:00Z",
    "application/json",
    '{"ok": true}',
    "",
    "tc:turn_1.tc_1.result",
    {"tool_call_id": "tc_1"},
    True,
    "[pruned]",
    "ttl",
    120,
    3,
)


def test_equals_the_block_init_builds():
    block = Block.from_columns(COLUMNS)
    assert block == Block(*COLUMNS)
    assert dataclasses.astuple(block) == COLUMNS
    assert block.effective_tokens == 3 and block.tool_call_id == "tc_1"


def test_stays_frozen():
    block = Block.from_columns(COLUMNS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.hidden = False  # type: ignore[misc]


@pytest.mark.parametrize("columns", [COLUMNS[:-1], (*COLUMNS, 0)])
def test_refuses_a_row_of_the_wrong_width(columns):
    with pytest.raises(TypeError, match="expected 15 columns"):
        Block.from_columns(columns)
