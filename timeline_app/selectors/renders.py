"""Reads of the render history (the cache explainer's memory)."""

from __future__ import annotations

from typing import Any

from timeline_app.models import RenderRecord, Timeline
from timeline_app.rendering.prefix import PreviousRender
from timeline_app.rendering.window_shape import unpack_seq_set

# The columns of a render record the cache explainer compares with (``PreviousRender``), after
# its ``rendered_at``; read by ``previous_render`` and by the render's one memory read
# (``selectors.usage.render_memory``).
PREVIOUS_RENDER_COLUMNS = (
    "settings_key",
    "summary_seq",
    "segment_digests",
    "segment_seqs",
    "segment_stride",
    "segment_count",
    "segment_seed",
    "hidden_seqs",
    "window_last_seq",
)


def previous_render_of(row: tuple[Any, ...]) -> PreviousRender:
    """``PreviousRender`` from ``(rendered_at, *PREVIOUS_RENDER_COLUMNS)``."""
    at, settings_key, summary_seq, digests, seqs, stride, count, seed, hidden, last_seq = row
    return PreviousRender(
        at=at,
        settings_key=settings_key,
        latest_compaction_id=summary_seq,
        digests=bytes(digests),
        seqs=bytes(seqs),
        stride=stride,
        segments=count,
        seed=bytes(seed),
        hidden=frozenset(unpack_seq_set(bytes(hidden))) if last_seq is not None else None,
        last_seq=last_seq,
    )


def previous_render(*, timeline: Timeline) -> PreviousRender | None:
    """The timeline's latest recorded render, as the explainer compares it (one query)."""
    row = (
        RenderRecord.objects.filter(timeline=timeline)
        .order_by("-id")
        .values_list("rendered_at", *PREVIOUS_RENDER_COLUMNS)
        .first()
    )
    return None if row is None else previous_render_of(row)


def render_history(*, timeline: Timeline, limit: int) -> list[RenderRecord]:
    """The newest ``limit`` renders, newest first, without their packed fingerprints."""
    return list(
        RenderRecord.objects.filter(timeline=timeline)
        .defer("segment_digests", "segment_seqs", "segment_seed")
        .order_by("-id")[:limit]
    )
