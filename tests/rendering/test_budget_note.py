"""Issue 35: ``budget_note`` ends the uncached tail with one line of the context's budget, in every
format; no cache marker moves and nothing before the tail changes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.rendering.test_render_properties import SOURCES, streams
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import Block
from timeline_app.domain.settings import RenderSettings, SettingsError, validate_overrides
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.formats import budget_note_text
from timeline_app.rendering.pipeline import FORMATS, RenderOptions, render_window


def without(value: Any, note: str) -> Any:
    """``value`` with the item that carries ``note`` taken out (and a message left empty by it)."""
    if isinstance(value, list):
        kept = []
        for item in value:
            if isinstance(item, dict) and item.get("text") == note:
                continue
            item = without(item, note)
            if isinstance(item, dict) and item.get("content") == []:
                continue
            kept.append(item)
        return kept
    if isinstance(value, dict):
        return {key: without(item, note) for key, item in value.items()}
    return value


def test_the_line_reads_like_the_issue_says():
    note = budget_note_text(context_tokens=61_204, max_tokens=200_000, compaction_at=150_000)
    assert note == "[context: 61,204 of 200,000 tokens; compaction at 150,000]"


def test_the_setting_is_true_or_false():
    assert validate_overrides({"budget_note": True}) == {"budget_note": True}
    with pytest.raises(SettingsError):
        validate_overrides({"budget_note": 1})


@settings(max_examples=examples(300), deadline=None, database=None)
@given(
    blocks=streams(),
    fmt=st.sampled_from(FORMATS),
    sources=st.booleans(),
    announce=st.booleans(),
    system_tokens=st.integers(0, 5_000),
    from_setting=st.booleans(),
)
def test_the_note_is_the_tails_last_line_and_moves_nothing(
    blocks: list[Block], fmt: str, sources: bool, announce: bool, system_tokens: int, from_setting: bool
) -> None:
    base = RenderOptions(format=fmt, include_sources=sources, include_announce=announce, announce=("2 left",))
    off = render_window(
        blocks, settings=RenderSettings(), options=base, sources=SOURCES, system_tokens=system_tokens
    )
    if from_setting:  # the conversation's setting, the render not saying
        on = render_window(
            blocks,
            settings=RenderSettings(budget_note=True),
            options=base,
            sources=SOURCES,
            system_tokens=system_tokens,
        )
    else:
        options = RenderOptions(**{**base.__dict__, "budget_note": True})
        on = render_window(
            blocks, settings=RenderSettings(), options=options, sources=SOURCES, system_tokens=system_tokens
        )
    continued = off.ending == "continue_text"  # the history ends with the model's
    context = off.tokens["total"] - (count_text_tokens(RenderSettings().continue_text) if continued else 0)
    note = budget_note_text(
        context_tokens=context, max_tokens=off.tokens["max_tokens"], compaction_at=180_000
    )
    assert note in stable_json(on.blocks)
    # the last content of the last message (or the last part) is the note
    last = on.blocks[-1]
    content = last.get("content", last.get("parts", [last])) if isinstance(last, dict) else [last]
    assert isinstance(content, list) and content[-1].get("text") == note
    # nothing before it changed, no marker moved, the cached prefix is the same; where the history
    # ends with the model's, the note's user message stands where "Continue." stood
    if continued:
        assert on.ending == "user"
        assert stable_json(on.blocks[:-1]) == stable_json(off.blocks[:-1])
    else:
        assert stable_json(without(on.blocks, note)) == stable_json(off.blocks)
    assert on.cache_points == off.cache_points and on.marked_seqs == off.marked_seqs
    assert on.prefix == off.prefix
    if on.request is not None and not continued:
        assert stable_json(without(on.request, note)) == stable_json(off.request)
    assert on.tokens["visible"] == off.tokens["visible"] and on.tokens["tail"] > off.tokens["tail"]
