"""Hypothesis properties of render_window over generated block streams."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.builders import PDF_B64, PNG_B64, Stream
from timeline_app.domain.block_text import block_text, stable_json
from timeline_app.domain.blocks import NOTES, TOOL_RESULT, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.formats import Source
from timeline_app.rendering.pipeline import RenderOptions, filter_contributions, render_window

TAIL_PREFIXES = ("[SOURCES POOL]", "[ANNOUNCE]")


@dataclass(frozen=True)
class TurnSpec:
    calls: int
    completion: bool
    attachment: str


turn_specs = st.builds(
    TurnSpec,
    calls=st.integers(min_value=0, max_value=3),
    completion=st.booleans(),
    attachment=st.sampled_from(["", "png", "pdf", "txt"]),
)


@st.composite
def streams(draw: st.DrawFn) -> list[Block]:
    s = Stream()
    if draw(st.booleans()):
        s.summary("t_sum", ["t_old"])
    for k, spec in enumerate(draw(st.lists(turn_specs, min_size=0, max_size=7))):
        tid = f"t{k}"
        s.header(tid)
        s.prompt(tid, f"prompt {k}")
        if spec.attachment == "png":
            s.attachment(tid, "p.png", "image/png", PNG_B64)
        elif spec.attachment == "pdf":
            s.attachment(tid, "m.pdf", "application/pdf", PDF_B64)
        elif spec.attachment == "txt":
            s.attachment(tid, "n.txt", "text/plain", text="notes")
        for c in range(spec.calls):
            s.tool_round(tid, f"tc_{k}_{c}", notes=draw(st.booleans()))
        if spec.completion:
            s.completion(tid)
    hide_mask = draw(st.lists(st.booleans(), min_size=len(s.blocks), max_size=len(s.blocks)))
    return [
        b.hide(replacement_text=f"[pruned] {b.path}", reason="ttl", replacement_tokens=3) if hidden else b
        for b, hidden in zip(s.blocks, hide_mask, strict=True)
    ]


options_strategy = st.builds(
    RenderOptions,
    format=st.sampled_from(["anthropic", "openai", "text"]),
    include_sources=st.booleans(),
    include_announce=st.booleans(),
    cache_last=st.booleans(),
    exclude_contributions=st.sampled_from([(), (NOTES,), (TOOL_RESULT, NOTES)]),
    include_only_contributions=st.sampled_from([(), ("react.tool.call", "assistant.completion")]),
    announce=st.sampled_from([(), ("budget: 3 calls",)]),
)
render_settings = st.builds(
    RenderSettings,
    cache_point_offset_rounds=st.integers(min_value=1, max_value=6),
    cache_point_min_rounds=st.integers(min_value=0, max_value=6),
)
SOURCES = (Source(sid=1, url="https://a.example", title="A", text="alpha"),)


def _part_is_tail(part: dict[str, object]) -> bool:
    return part.get("type") == "text" and str(part.get("text", "")).startswith(TAIL_PREFIXES)


@settings(max_examples=examples(150), deadline=None, database=None)
@given(blocks=streams(), options=options_strategy, cfg=render_settings)
def test_markers_at_most_three_on_emitted_non_tail_parts(
    blocks: list[Block], options: RenderOptions, cfg: RenderSettings
) -> None:
    rendered = render_window(blocks, settings=cfg, options=options, sources=SOURCES)
    marked = [i for i, p in enumerate(rendered.blocks) if "cache_control" in p]
    assert marked == rendered.cache_points
    assert len(marked) <= 3
    assert len(rendered.marked_seqs) == len(marked)
    if options.format == "openai":
        assert marked == [] and "cache_control" not in stable_json(rendered.blocks)
        return
    stable = filter_contributions(
        blocks, exclude=options.exclude_contributions, include_only=options.include_only_contributions
    )
    if stable and options.cache_last:
        assert rendered.marked_seqs[-1] == stable[-1].seq
    for index in marked:
        part = rendered.blocks[index]
        assert not _part_is_tail(part)
        assert part.get("text") or part.get("source")  # never an empty part
    tail_count = sum(_part_is_tail(p) for p in rendered.blocks)
    assert all(i < len(rendered.blocks) - tail_count for i in marked)


@settings(max_examples=examples(100), deadline=None, database=None)
@given(blocks=streams(), options=options_strategy)
def test_same_input_renders_identical_bytes(blocks: list[Block], options: RenderOptions) -> None:
    first = render_window(blocks, settings=RenderSettings(), options=options, sources=SOURCES)
    second = render_window(copy.deepcopy(blocks), settings=RenderSettings(), options=options, sources=SOURCES)
    assert stable_json(first.blocks) == stable_json(second.blocks)
    assert first.cache_points == second.cache_points and first.tokens == second.tokens
    assert first.debug == second.debug


@settings(max_examples=examples(100), deadline=None, database=None)
@given(blocks=streams(), options=options_strategy)
def test_block_order_is_preserved(blocks: list[Block], options: RenderOptions) -> None:
    rendered = render_window(blocks, settings=RenderSettings(), options=options)
    stable = filter_contributions(
        blocks, exclude=options.exclude_contributions, include_only=options.include_only_contributions
    )
    expected = [block_text(b) for b in stable]
    if options.format == "openai":
        parts = [p for m in rendered.blocks for p in m["content"]]
    else:
        parts = rendered.blocks
    texts = [p["text"] for p in parts if p["type"] == "text" and not p["text"].startswith("<")]
    assert texts[: len(expected)] == expected
    assert rendered.marked_seqs == sorted(rendered.marked_seqs)


@settings(max_examples=examples(100), deadline=None, database=None)
@given(blocks=streams())
def test_hiding_blocks_never_moves_markers(blocks: list[Block]) -> None:
    options = RenderOptions(format="anthropic")
    shown = [Block(**{**b.__dict__, "hidden": False}) for b in blocks]
    hidden_all = [b.hide(replacement_text="x", reason="ttl", replacement_tokens=1) for b in blocks]
    seqs = render_window(shown, settings=RenderSettings(), options=options).marked_seqs
    assert render_window(blocks, settings=RenderSettings(), options=options).marked_seqs == seqs
    assert render_window(hidden_all, settings=RenderSettings(), options=options).marked_seqs == seqs
