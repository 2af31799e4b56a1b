"""TTL pruning plan: statuses, keep-recent-turns, what is and is not pruned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.builders import PNG_B64, Stream
from timeline_app.rendering.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    SUMMARY,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
)
from timeline_app.rendering.formats import block_text
from timeline_app.rendering.settings import RenderSettings
from timeline_app.rendering.tokens import count_text_tokens
from timeline_app.rendering.ttl import apply_hides, plan_ttl_pruning

NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
SETTINGS = RenderSettings(ttl_keep_recent_turns=2)
EXPIRED = NOW - timedelta(seconds=SETTINGS.cache_ttl_seconds)


def _stream(turns: int = 4) -> Stream:
    s = Stream()
    for k in range(turns):
        s.turn(f"t{k}", calls=2)
    return s


def test_disabled_when_ttl_is_zero() -> None:
    decision = plan_ttl_pruning(
        _stream().blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(cache_ttl_seconds=0)
    )
    assert decision.status == "disabled" and decision.hides == ()


def test_armed_on_first_render() -> None:
    decision = plan_ttl_pruning(_stream().blocks, now=NOW, last_touch=None, settings=SETTINGS)
    assert decision.status == "armed" and decision.hides == ()


def test_never_prunes_while_cache_is_warm() -> None:
    fresh_limit = SETTINGS.cache_ttl_seconds - SETTINGS.cache_ttl_buffer_seconds
    for age in (0, 1, fresh_limit - 1, fresh_limit):
        decision = plan_ttl_pruning(
            _stream().blocks, now=NOW, last_touch=NOW - timedelta(seconds=age), settings=SETTINGS
        )
        assert decision.status == "fresh" and decision.hides == ()


def test_expires_just_past_ttl_minus_buffer() -> None:
    fresh_limit = SETTINGS.cache_ttl_seconds - SETTINGS.cache_ttl_buffer_seconds
    last = NOW - timedelta(seconds=fresh_limit, microseconds=1)
    assert plan_ttl_pruning(_stream().blocks, now=NOW, last_touch=last, settings=SETTINGS).status == "pruned"


def test_expired_hides_tool_results_outside_recent_turns() -> None:
    s = _stream(4)
    decision = plan_ttl_pruning(s.blocks, now=NOW, last_touch=EXPIRED, settings=SETTINGS)
    assert decision.status == "pruned"
    by_seq = {b.seq: b for b in s.blocks}
    hidden_blocks = [by_seq[h.seq] for h in decision.hides]
    assert {b.turn_id for b in hidden_blocks} == {"t0", "t1"}
    assert all(b.type == TOOL_RESULT for b in hidden_blocks)
    assert len(hidden_blocks) == 4
    for hide in decision.hides:
        assert hide.reason == "ttl"
        assert hide.path == by_seq[hide.seq].path
        assert hide.replacement_text.startswith(f"[pruned after cache expiry] {hide.path} — ")
        assert hide.replacement_text.endswith("(read it back by path)")


def test_keep_recent_turns_follows_first_appearance_order() -> None:
    s = _stream(3)
    settings = RenderSettings(ttl_keep_recent_turns=1)
    decision = plan_ttl_pruning(s.blocks, now=NOW, last_touch=EXPIRED, settings=settings)
    assert {b.turn_id for b in s.blocks if b.seq in {h.seq for h in decision.hides}} == {"t0", "t1"}
    keep_all = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=6)
    )
    assert keep_all.status == "no_effect" and keep_all.hides == ()
    keep_none = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=0)
    )
    assert len(keep_none.hides) == 6


def test_bulky_blocks_are_pruned_but_structural_blocks_never() -> None:
    s = Stream()
    s.header("t0")
    s.prompt("t0", "p" * 10)
    s.attachment("t0", "photo.png", "image/png", PNG_B64)
    big_notes = s.add(NOTES, "t0", text="long\nnotes", tokens=1_500, path="ar:t0.react.notes.tc_1")
    small_notes = s.add(NOTES, "t0", text="short", tokens=20, path="ar:t0.react.notes.tc_2")
    s.add(USER_PROMPT, "t0", tokens=5_000, text="huge prompt", path="ar:t0.user.prompt")
    s.add(ASSISTANT_COMPLETION, "t0", tokens=5_000, text="huge answer", path="ar:t0.assistant.completion")
    s.add(SUMMARY, "t0", tokens=5_000, text="huge summary", path="su:t0.conv.range.summary")
    s.turn("t1")
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    hidden_seqs = {h.seq for h in decision.hides}
    assert hidden_seqs == {3, big_notes.seq}
    assert small_notes.seq not in hidden_seqs
    types = {b.type for b in s.blocks if b.seq in hidden_seqs}
    assert not types & {TURN_HEADER, USER_PROMPT, SUMMARY, ASSISTANT_COMPLETION}
    image_hide = next(h for h in decision.hides if h.seq == 3)
    assert "image/png payload" in image_hide.replacement_text
    notes_hide = next(h for h in decision.hides if h.seq == big_notes.seq)
    assert "— long (read it back by path)" in notes_hide.replacement_text


def test_already_hidden_blocks_are_not_hidden_again_and_no_effect() -> None:
    s = _stream(3)
    settings = RenderSettings(ttl_keep_recent_turns=1)
    first = plan_ttl_pruning(s.blocks, now=NOW, last_touch=EXPIRED, settings=settings)
    pruned = apply_hides(s.blocks, first.hides)
    second = plan_ttl_pruning(pruned, now=NOW, last_touch=EXPIRED, settings=settings)
    assert second.status == "no_effect" and second.hides == ()


def test_replacement_tokens_count_the_hidden_rendering() -> None:
    s = _stream(3)
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    pruned = {b.seq: b for b in apply_hides(s.blocks, decision.hides)}
    for hide in decision.hides:
        block = pruned[hide.seq]
        assert block.hidden and block.hidden_reason == "ttl"
        assert hide.replacement_tokens == count_text_tokens(block_text(block)) > 0
        assert block.effective_tokens == hide.replacement_tokens


def test_long_first_line_hint_is_cut_to_80_chars() -> None:
    s = Stream()
    s.header("t0")
    s.add(TOOL_RESULT, "t0", text="x" * 500 + "\nsecond", path="tc:t0.tc_1.result")
    s.turn("t1")
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    (hide,) = decision.hides
    hint = hide.replacement_text.split(" — ", 1)[1].removesuffix(" (read it back by path)")
    assert len(hint) <= 80 and "second" not in hint
