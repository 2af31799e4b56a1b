"""TTL pruning plan: statuses, keep-recent-turns, what is and is not pruned; pinned exactly: turns
kept by first appearance (turn ids that do not sort in appearance order), and the bulky-block
boundary at BULKY_TOKENS (1,000 kept, 1,001 pruned)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.builders import PNG_B64, Stream
from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    SUMMARY,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
    Block,
)
from timeline_app.domain.costs import block_tokens, hidden_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.ttl import (
    BULKY_TOKENS,
    apply_hides,
    is_prunable,
    plan_ttl_pruning,
    replacement_text_for,
    stored_costs,
    ttl_replacement_tokens,
)

NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
SETTINGS = RenderSettings(ttl_keep_recent_turns=2)
EXPIRED = NOW - timedelta(seconds=SETTINGS.cache_ttl_seconds)


def _stream(turns: int = 4) -> Stream:
    s = Stream()
    for k in range(turns):
        s.turn(f"t{k}", calls=2)
    return s


def _expired(blocks, *, keep_recent_turns: int):
    """The decision for ``blocks`` whose cache has expired, keeping that many recent turns."""
    return plan_ttl_pruning(
        blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=keep_recent_turns)
    )


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
    keep_all = _expired(s.blocks, keep_recent_turns=6)
    assert keep_all.status == "no_effect" and keep_all.hides == ()
    keep_none = _expired(s.blocks, keep_recent_turns=0)
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
    decision = _expired(s.blocks, keep_recent_turns=1)
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
    decision = _expired(s.blocks, keep_recent_turns=1)
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
    decision = _expired(s.blocks, keep_recent_turns=1)
    (hide,) = decision.hides
    hint = hide.replacement_text.split(" — ", 1)[1].removesuffix(" (read it back by path)")
    assert len(hint) <= 80 and "second" not in hint


# Pinned exactly.
def _turn_ids_hidden(stream: Stream, decision) -> list[str]:
    by_seq = {b.seq: b for b in stream.blocks}
    return sorted({by_seq[h.seq].turn_id for h in decision.hides})


def test_recent_turns_are_the_last_to_appear_not_the_highest_ids() -> None:
    # Appearance order z, a, m: sorted by id it would be a, m, z.
    s = Stream()
    for turn_id in ("turn_z", "turn_a", "turn_m"):
        s.turn(turn_id, calls=1)
    decision = _expired(s.blocks, keep_recent_turns=1)
    assert decision.status == "pruned"
    assert _turn_ids_hidden(s, decision) == ["turn_a", "turn_z"]
    two = _expired(s.blocks, keep_recent_turns=2)
    assert _turn_ids_hidden(s, two) == ["turn_z"]


def test_numeric_turn_ids_are_not_ordered_as_strings_or_numbers() -> None:
    s = Stream()
    for turn_id in ("turn_10", "turn_9", "turn_2"):
        s.turn(turn_id, calls=1)
    decision = _expired(s.blocks, keep_recent_turns=1)
    assert _turn_ids_hidden(s, decision) == ["turn_10", "turn_9"]


@pytest.mark.parametrize(("tokens", "pruned"), [(999, False), (1_000, False), (1_001, True)])
def test_bulky_boundary_is_more_than_one_thousand_tokens(tokens: int, pruned: bool) -> None:
    assert BULKY_TOKENS == 1_000
    s = Stream()
    s.header("t0")
    notes = s.add(NOTES, "t0", text="notes", tokens=tokens, path="ar:t0.react.notes.tc_1")
    s.turn("t1")
    assert is_prunable(notes) is pruned
    decision = _expired(s.blocks, keep_recent_turns=1)
    assert [h.seq for h in decision.hides] == ([notes.seq] if pruned else [])


def _replacement(**kw) -> str:
    kw.setdefault("seq", 4)
    kw.setdefault("type", TOOL_RESULT)
    kw.setdefault("turn_id", "t0")
    return replacement_text_for(Block(**kw))


def test_replacement_hint_is_the_first_non_blank_line() -> None:
    text = _replacement(path="tc:t0.tc_1.result", text="\n   \n  hotel ribeira  \nsecond")
    assert text == "[pruned after cache expiry] tc:t0.tc_1.result — hotel ribeira (read it back by path)"


def test_replacement_hint_of_a_binary_block_names_mime_or_binary_and_its_length() -> None:
    with_mime = _replacement(path="p", text="", mime="image/png", data="QUJD")
    assert with_mime == "[pruned after cache expiry] p — image/png payload, b64_len=4 (read it back by path)"
    no_mime = _replacement(path="p", text="", mime="", data="QUJDRA==")
    assert no_mime == "[pruned after cache expiry] p — binary payload, b64_len=8 (read it back by path)"
    # Text wins over the payload when both exist.
    assert "— caption (read" in _replacement(path="p", text="caption", mime="image/png", data="QUJD")


def test_replacement_hint_is_cut_to_80_characters_with_an_ellipsis() -> None:
    exactly = "a" * 80
    assert f"— {exactly} (read" in _replacement(path="p", text=exactly)
    over = "b" * 78 + "   c"  # 82 characters: cut to 79, trailing blanks stripped, then "…"
    assert f"— {'b' * 78}… (read" in _replacement(path="p", text=over)
    long = "  " + "d" * 100
    assert f"— {'d' * 79}… (read" in _replacement(path="p", text=long)


def test_replacement_without_path_or_text_names_type_and_seq() -> None:
    assert _replacement(path="", text="") == (
        "[pruned after cache expiry] react.tool.result#4 — react.tool.result (read it back by path)"
    )


def test_a_one_second_ttl_still_prunes_and_zero_means_never() -> None:
    s = Stream()
    s.turn("turn_1", calls=1)
    s.turn("turn_2", calls=1)
    settings = RenderSettings(cache_ttl_seconds=1, ttl_keep_recent_turns=1)
    assert plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=NOW - timedelta(seconds=2), settings=settings
    ).status == ("pruned")
    never = RenderSettings(cache_ttl_seconds=0, ttl_keep_recent_turns=1)
    assert plan_ttl_pruning(s.blocks, now=NOW, last_touch=NOW - timedelta(days=1), settings=never).hides == ()


def test_keeping_zero_recent_turns_prunes_every_turn() -> None:
    s = Stream()
    s.turn("turn_1", calls=1)
    s.turn("turn_2", calls=1)
    decision = _expired(s.blocks, keep_recent_turns=0)
    assert _turn_ids_hidden(s, decision) == ["turn_1", "turn_2"]


def _one_pruned_result(**kw) -> tuple[Stream, Block]:
    s = Stream()
    s.header("t0")
    result = s.add(TOOL_RESULT, "t0", text="line one\nline two", path="tc:t0.tc_1.result", **kw)
    s.turn("t1")
    return s, result


def test_pruning_takes_the_replacement_tokens_stored_with_the_block() -> None:
    s, _ = _one_pruned_result(replacement_tokens=777)
    decision = _expired(s.blocks, keep_recent_turns=1)
    (hide,) = decision.hides
    assert hide.replacement_tokens == 777


def test_pruning_counts_the_replacement_tokens_when_none_are_stored() -> None:
    s, result = _one_pruned_result()
    (hide,) = _expired(s.blocks, keep_recent_turns=1).hides
    expected = hidden_tokens(result, replacement_text_for(result))
    assert expected > 0 and hide.replacement_tokens == expected
    assert ttl_replacement_tokens(result) == expected


def test_no_stored_replacement_tokens_for_blocks_pruning_never_hides_or_without_a_path() -> None:
    s = Stream()
    s.header("t0")
    notes = s.add(NOTES, "t0", text="small notes", tokens=10, path="ar:t0.react.notes.tc_1")
    bulky = s.add(NOTES, "t0", text="bulky notes", tokens=BULKY_TOKENS + 1, path="ar:t0.react.notes.tc_2")
    no_path = s.add(TOOL_RESULT, "t0", text="result")
    assert ttl_replacement_tokens(notes) == 0
    assert ttl_replacement_tokens(no_path) == 0
    assert ttl_replacement_tokens(bulky) == hidden_tokens(bulky, replacement_text_for(bulky)) > 0


def test_stored_costs_count_the_tokens_first_so_a_bulky_block_gets_its_pruned_cost() -> None:
    """A block as written carries no tokens yet: the replacement is costed with the tokens just
    counted (costed with 0, a bulky block would look prunable by nobody and store 0)."""
    s = Stream()
    s.header("t0")
    bulky = s.add(NOTES, "t0", text="findings " * 2_000, tokens=0, path="ar:t0.react.notes.tc_1")
    assert bulky.tokens == 0 and block_tokens(bulky) > BULKY_TOKENS
    costs = stored_costs(bulky)
    assert costs.tokens == block_tokens(bulky)
    assert costs.replacement_tokens == hidden_tokens(bulky, replacement_text_for(bulky)) > 0


def test_stored_costs_of_a_hidden_block_are_its_visible_tokens_and_its_own_replacement() -> None:
    _, result = _one_pruned_result(hidden=True, replacement_text="[hidden by the agent, see the file]")
    costs = stored_costs(result)
    assert costs.tokens == block_tokens(result) == block_tokens(result.with_hide_state(hidden=False))
    assert costs.replacement_tokens == hidden_tokens(result, "[hidden by the agent, see the file]")
    assert costs.replacement_tokens != ttl_replacement_tokens(result.with_hide_state(hidden=False))


def test_stored_costs_of_a_block_pruning_never_hides_have_no_replacement() -> None:
    s = Stream()
    summary = s.add(SUMMARY, "", text="[CONVERSATION SUMMARY]\n" + "goal " * 2_000)
    assert stored_costs(summary) == (block_tokens(summary), 0)
