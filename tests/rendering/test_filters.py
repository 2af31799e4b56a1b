"""Contribution filters apply to history and the current turn alike (seed 000)."""

from __future__ import annotations

import pytest

from tests.builders import Stream
from timeline_app.domain.blocks import NOTES, SUMMARY, TOOL_CALL, TOOL_RESULT, TURN_HEADER, USER_PROMPT
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.pipeline import RenderOptions, filter_contributions, render_window


def _stream() -> Stream:
    s = Stream()
    s.summary("t0", ["a"])
    s.turn("t0", calls=1)  # history
    s.turn("t1", calls=1, completion=False)  # current turn
    return s


def test_exclude_drops_the_type_in_history_and_current_turn() -> None:
    kept = filter_contributions(_stream().blocks, exclude=(NOTES,))
    assert NOTES not in {b.type for b in kept}
    assert {b.turn_id for b in kept if b.type == TOOL_CALL} == {"t0", "t1"}


def test_include_only_keeps_matching_types_plus_protected_ones() -> None:
    kept = filter_contributions(_stream().blocks, include_only=(TOOL_CALL,))
    assert {b.type for b in kept} == {SUMMARY, TURN_HEADER, USER_PROMPT, TOOL_CALL}
    assert {b.turn_id for b in kept if b.type == TOOL_CALL} == {"t0", "t1"}


def test_headers_prompts_and_summaries_are_never_filtered() -> None:
    blocks = _stream().blocks
    kept = filter_contributions(blocks, exclude=(TURN_HEADER, USER_PROMPT, SUMMARY, TOOL_RESULT))
    assert [b.type for b in kept].count(TURN_HEADER) == 2
    assert [b.type for b in kept].count(USER_PROMPT) == 2
    assert [b.type for b in kept].count(SUMMARY) == 1
    assert TOOL_RESULT not in {b.type for b in kept}


def test_render_window_applies_filters_before_cache_points() -> None:
    s = _stream()
    options = RenderOptions(format="text", exclude_contributions=(TOOL_RESULT, NOTES))
    rendered = render_window(s.blocks, settings=RenderSettings(), options=options)
    assert "[react.tool.result]" not in (rendered.debug or "")
    assert "[AI Agent say]: \n[path: ar:t1.react.notes" not in (rendered.debug or "")
    # The tail marker sits on the last surviving block: t1's tool call.
    assert rendered.marked_seqs[-1] == next(
        b.seq for b in s.blocks if b.type == TOOL_CALL and b.turn_id == "t1"
    )
    excluded = {b.seq for b in s.blocks if b.type in (TOOL_RESULT, NOTES)}
    assert not excluded & set(rendered.marked_seqs)


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError):
        RenderOptions(format="xml")  # type: ignore[arg-type]
