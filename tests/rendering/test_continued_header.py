"""A window that starts mid-turn after a summary shows a ``(continued)`` header (pure): the turn
must be one the summary covers, through ``covered_turn_ids`` or through ``split_turn_id``."""

from __future__ import annotations

import pytest

from timeline_app.domain.blocks import SUMMARY, Block
from timeline_app.rendering.continued_header import continued_turn_header


def _window(meta: dict, *, turn: str = "t2") -> list[Block]:
    return [
        Block(seq=10, type=SUMMARY, text="summary", meta=meta),
        Block(seq=11, type="react.notes", turn_id=turn, ts="2026-01-01T10:00:00Z", text="go on"),
    ]


@pytest.mark.parametrize(
    "meta",
    [
        {"covered_turn_ids": ["t1", "t2"]},
        {"covered_turn_ids": ["t1"], "split_turn_id": "t2"},
        {"split_turn_id": "t2"},
    ],
)
def test_a_turn_the_summary_covers_gets_a_continued_header(meta: dict) -> None:
    header = continued_turn_header(_window(meta))
    assert header is not None
    assert (header.turn_id, header.seq, header.meta) == ("t2", 11, {"continued": True})


@pytest.mark.parametrize(
    "meta",
    [
        {},
        {"covered_turn_ids": ["t1"]},
        {"covered_turn_ids": "t2"},  # not a list: covers nothing
        {"covered_turn_ids": [["t2"], 2]},  # entries that are not turn ids
        {"covered_turn_ids": ["t1"], "split_turn_id": ["t2"]},
    ],
)
def test_a_turn_the_summary_does_not_cover_gets_none(meta: dict) -> None:
    assert continued_turn_header(_window(meta)) is None
