"""TTL pruning pinned exactly: turns kept by first appearance (turn ids that do not sort in
appearance order), and the bulky-block boundary at BULKY_TOKENS (1,000 kept, 1,001 pruned)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from timeline_app.rendering.blocks import NOTES
from timeline_app.rendering.settings import RenderSettings
from timeline_app.rendering.ttl import BULKY_TOKENS, is_prunable, plan_ttl_pruning

from .builders import Stream

NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
EXPIRED = NOW - timedelta(seconds=RenderSettings().cache_ttl_seconds)


def _turn_ids_hidden(stream: Stream, decision) -> list[str]:
    by_seq = {b.seq: b for b in stream.blocks}
    return sorted({by_seq[h.seq].turn_id for h in decision.hides})


def test_recent_turns_are_the_last_to_appear_not_the_highest_ids() -> None:
    # Appearance order z, a, m: sorted by id it would be a, m, z.
    s = Stream()
    for turn_id in ("turn_z", "turn_a", "turn_m"):
        s.turn(turn_id, calls=1)
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    assert decision.status == "pruned"
    assert _turn_ids_hidden(s, decision) == ["turn_a", "turn_z"]
    two = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=2)
    )
    assert _turn_ids_hidden(s, two) == ["turn_z"]


def test_numeric_turn_ids_are_not_ordered_as_strings_or_numbers() -> None:
    s = Stream()
    for turn_id in ("turn_10", "turn_9", "turn_2"):
        s.turn(turn_id, calls=1)
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    assert _turn_ids_hidden(s, decision) == ["turn_10", "turn_9"]


@pytest.mark.parametrize(("tokens", "pruned"), [(999, False), (1_000, False), (1_001, True)])
def test_bulky_boundary_is_more_than_one_thousand_tokens(tokens: int, pruned: bool) -> None:
    assert BULKY_TOKENS == 1_000
    s = Stream()
    s.header("t0")
    notes = s.add(NOTES, "t0", text="notes", tokens=tokens, path="ar:t0.react.notes.tc_1")
    s.turn("t1")
    assert is_prunable(notes) is pruned
    decision = plan_ttl_pruning(
        s.blocks, now=NOW, last_touch=EXPIRED, settings=RenderSettings(ttl_keep_recent_turns=1)
    )
    assert [h.seq for h in decision.hides] == ([notes.seq] if pruned else [])
