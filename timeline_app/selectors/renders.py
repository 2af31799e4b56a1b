"""Reads of the render history (the cache explainer's memory)."""

from __future__ import annotations

from timeline_app.models import RenderRecord, Timeline
from timeline_app.rendering.prefix import PreviousRender
from timeline_app.rendering.window_shape import unpack_seq_set


def previous_render(*, timeline: Timeline) -> PreviousRender | None:
    """The timeline's latest recorded render, as the explainer compares it (one query)."""
    row = (
        RenderRecord.objects.filter(timeline=timeline)
        .order_by("-id")
        .values_list(
            "rendered_at",
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
        .first()
    )
    if row is None:
        return None
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


def render_history(*, timeline: Timeline, limit: int) -> list[RenderRecord]:
    """The newest ``limit`` renders, newest first, without their packed fingerprints."""
    return list(
        RenderRecord.objects.filter(timeline=timeline)
        .defer("segment_digests", "segment_seqs", "segment_seed")
        .order_by("-id")[:limit]
    )
