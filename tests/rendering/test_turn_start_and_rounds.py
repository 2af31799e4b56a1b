"""Where the current turn starts and which round each block is in (pure, cache_points.py),
pinned exactly in the states the property tests rarely reach: a turn that has only just opened,
blocks without turn ids, a window that starts with the turn, a summary in the way."""

from __future__ import annotations

import pytest

from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.cache_points import assign_rounds, cache_point_indices, current_turn_start
from timeline_app.rendering.pipeline import RenderOptions, render_window


def _h(seq: int, turn: str = "") -> Block:
    return Block(seq=seq, type="turn.header", turn_id=turn)


def _p(seq: int, turn: str = "", **kw) -> Block:
    return Block(seq=seq, type="user.prompt", turn_id=turn, **kw)


def _n(seq: int, turn: str = "", **kw) -> Block:
    return Block(seq=seq, type="react.notes", turn_id=turn, **kw)


@pytest.mark.parametrize(
    ("blocks", "start"),
    [
        ([_h(1, "t1"), _p(2, "t1"), _n(3, "t1"), _h(4, "t2"), _p(5, "t2")], 3),  # a turn just opened
        ([_h(1, "t1"), _p(2, "t1"), _n(3, "t1"), _h(4, "t2")], 3),  # only its header so far
        ([_h(1), _p(2), _n(3), _p(4)], 3),  # no turn ids: a notes block ends the user group
        ([_n(1), Block(seq=2, type="user.attachment"), _p(3)], 1),  # no turn ids: attachments join
        ([_p(1, "t1"), _n(2, "t1")], 0),  # the window starts with the turn
        (
            [
                _h(1, "t1"),
                _n(2, "t1"),
                Block(seq=3, type="user.attachment", turn_id="t2", author="user"),
                _n(4, "t2"),
            ],
            2,
        ),
        ([Block(seq=1, type="conv.range.summary", turn_id="t1"), _n(2, "t1"), _p(3, "t1")], 1),
        ([_n(1, "t1")], None),
    ],
)
def test_current_turn_start(blocks: list[Block], start: int | None) -> None:
    assert current_turn_start(blocks) == start


def test_an_assistant_block_after_the_completion_opens_a_round_and_a_user_block_another() -> None:
    blocks = [
        _h(1, "t1"),
        _p(2, "t1"),
        Block(seq=3, type="assistant.completion", turn_id="t1"),
        _n(4, "t1", author="assistant"),
        _n(5, "t1", author="user"),
        _n(6, "t1"),
    ]
    assert assign_rounds(blocks) == [0, 0, 0, 1, 2, 2]


def test_a_turn_that_just_opened_puts_the_previous_turn_point_on_the_last_turns_end() -> None:
    blocks = [
        _h(1, "t1"),
        _p(2, "t1"),
        _n(3, "t1", meta={"tool_call_id": "tc_1"}),
        Block(seq=4, type="assistant.completion", turn_id="t1"),
        _h(5, "t2"),
        _p(6, "t2"),
    ]
    assert cache_point_indices(blocks, settings=RenderSettings()) == [3, 5]
    assert cache_point_indices(blocks, settings=RenderSettings(), cache_last=False) == [3]


def _summary(seq: int) -> Block:
    return Block(seq=seq, type="conv.range.summary", turn_id="t0")


def _c(seq: int, turn: str = "") -> Block:
    return Block(seq=seq, type="assistant.completion", turn_id=turn)


TC1 = {"tool_call_id": "tc_1"}


@pytest.mark.parametrize(
    ("blocks", "rounds"),
    [
        ([_summary(1), _h(2, "t1"), _p(3, "t1"), _n(4, "t1", meta=TC1), _c(5, "t1")], [0, 0, 0, 0, 1]),
        ([_n(1, "t1"), _summary(2), _n(3, "t1", meta={"tool_call_id": "tc_2"}), _c(4, "t1")], [0, 1, 1, 2]),
        ([_h(1, "t1"), _c(2, "t1"), _summary(3)], [0, 0, 0]),
        ([_summary(1)], [0]),
        ([_h(1), _p(2), _n(3, meta=TC1), _c(4), _p(5), _c(6)], [0, 0, 0, 1, 2, 2]),
        ([_p(1, "t1"), _p(2, "t2"), _c(3, "t2")], [0, 1, 1]),
        ([_n(1, "t1"), _n(2, "t1")], [0, 0]),
        ([_h(1, "t1"), _h(2, "t1"), _c(3, "t1")], [0, 1, 1]),
    ],
)
def test_rounds_with_summaries_and_without_turn_ids(blocks: list[Block], rounds: list[int]) -> None:
    assert assign_rounds(blocks) == rounds


def test_stable_json_sorts_keys_and_keeps_unicode() -> None:
    assert stable_json({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'


def test_render_window_defaults_cache_last_and_the_openai_fingerprint() -> None:
    blocks = [
        _h(1, "t1"),
        _p(2, "t1"),
        Block(seq=3, type="assistant.completion", turn_id="t1", text="ok"),
    ]
    settings = RenderSettings()
    plain = render_window(blocks, settings=settings, options=RenderOptions(format="anthropic"))
    assert plain.tokens["system"] == 0 and plain.cache_points == [2]
    seeded = render_window(
        blocks, settings=settings, options=RenderOptions(format="anthropic"), prefix_seed=""
    )
    assert seeded.prefix == plain.prefix  # the seed defaults to no system prompt
    no_tail = render_window(
        blocks, settings=settings, options=RenderOptions(format="anthropic", cache_last=False)
    )
    assert no_tail.cache_points == []
    openai = render_window(blocks, settings=settings, options=RenderOptions(format="openai"))
    assert openai.prefix.seqs == (1, 2, 3) and len(openai.prefix.digests) == 3
