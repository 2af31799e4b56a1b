"""The usage forecast of a native Anthropic render after a split-turn compaction: the continued
turn's ``[TURN …] (continued)`` header renders as a segment of its own that shares the seq of the
block after it, and a marker on that block is one breakpoint, on its last segment, never two
(``rendering/usage/requests.native_anthropic_request``; counted twice, four markers made five
breakpoints and the forecast raised, and a header's digest was written as a cache entry the
provider never had) (issue 30)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from tests.services.compaction.test_after_tokens_as_rendered import BASE, mid_round_current_turn
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.prefix import Prefix
from timeline_app.rendering.usage.forecast import CacheRules, CacheState, forecast_usage
from timeline_app.rendering.usage.requests import native_anthropic_request
from timeline_app.services.render import timeline_render

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
MARKED = {
    "messages": [{"role": "user", "content": [{"type": "text", "cache_control": {"type": "ephemeral"}}]}]
}


def breakpoints(prefix: Prefix, marked: list[int], head_tokens: int = 0) -> list[int]:
    request = native_anthropic_request(
        model="claude-sonnet-4-5",
        prefix=prefix,
        request=MARKED,
        marked_seqs=marked,
        head_tokens=head_tokens,
        input_tokens=(prefix.tokens[-1] if prefix.tokens else 0) + head_tokens,
    )
    return [i for i, block in enumerate(request.blocks) if block.breakpoint_ttl is not None]


def test_a_marker_on_a_block_rendered_as_two_segments_is_one_breakpoint_on_its_last():
    # seq 11 renders as the continued header and then the block itself.
    prefix = Prefix(
        digests=(b"a" * 8, b"b" * 8, b"c" * 8, b"d" * 8),
        tokens=(1_100, 1_110, 1_500, 1_900),
        seqs=(10, 11, 11, 12),
    )
    assert breakpoints(prefix, [11]) == [2]
    assert breakpoints(prefix, [10, 11, 12]) == [0, 2, 3]
    assert breakpoints(prefix, [11], head_tokens=50) == [3], "after the head's own block"


@pytest.mark.django_db
def test_four_markers_after_a_split_turn_are_four_breakpoints(owner, conversation):
    conversation.settings = {"max_tokens": 20_000, "keep_recent_tokens": 600}
    conversation.save(update_fields=["settings"])
    timeline = conversation.timelines.get()
    mid_round_current_turn(timeline)
    compacted = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert compacted["split_turn_id"] == "turn_5", compacted

    rendered = timeline_render(timeline=timeline, options=RenderOptions(format="anthropic_messages")).rendered
    prefix = rendered.prefix
    (split,) = [seq for seq, n in Counter(prefix.seqs).items() if n == 2]  # the continued header's
    marked = sorted({*rendered.marked_seqs, split, *prefix.seqs})[:4]
    assert split in marked and len(marked) == 4
    points = breakpoints(prefix, marked)

    assert len(points) == 4
    last_of_split = max(i for i, seq in enumerate(prefix.seqs) if seq == split)
    assert last_of_split in points and last_of_split - 1 not in points
    request = native_anthropic_request(
        model="claude-sonnet-4-5",
        prefix=prefix,
        request=MARKED,
        marked_seqs=marked,
        head_tokens=0,
        input_tokens=prefix.tokens[-1],
    )
    no_minimum = CacheRules(anthropic_min_tokens={"claude-sonnet-4-5": 1})
    forecast = forecast_usage(request=request, state=CacheState(), now=NOW, rules=no_minimum)
    assert len(forecast.touched) == 4, "one cache entry per marker"
