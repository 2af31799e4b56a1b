"""The conversation page's two charts as server-rendered inline SVG (no script, no CDN), and the
frame every admin chart is drawn in (``chart_svg``, ``axis``, ``slots``: the cost panel's chart,
``admin/cost.py``, uses them too).

Pure: numbers in, markup out. Every piece of text (turn ids, times, reasons) goes through
``format_html`` and is escaped; only markup built here is safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH = 1000
HEIGHT = 220
LEFT = 56
RIGHT = 8
TOP = 22
BOTTOM = 28

COLORS = {
    "visible": "#417690",
    "hidden": "#d08a2c",
    "compacted": "#9aa3ab",
    "reused": "#2e8b57",
    "new": "#c0392b",
}


@dataclass(frozen=True)
class TurnBar:
    turn_id: str
    visible: int
    hidden: int
    compacted: int


@dataclass(frozen=True)
class RenderBar:
    label: str
    reason: str
    reused: int
    new: int


def _scale(peak: int) -> float:
    return (HEIGHT - TOP - BOTTOM) / peak if peak > 0 else 0.0


def axis(peak: int, unit: str) -> SafeString:
    """The value axis from 0 to ``peak`` and the slots' ``unit`` under it."""
    base = HEIGHT - BOTTOM
    return format_html(
        '<line x1="{}" y1="{}" x2="{}" y2="{}" class="tl-axis" stroke="#888"/>'
        '<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#666">{}</text>'
        '<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#666">0</text>'
        '<text x="{}" y="{}" font-size="11" fill="#666">{}</text>',
        LEFT,
        base,
        WIDTH - RIGHT,
        base,
        LEFT - 4,
        TOP + 10,
        peak,
        LEFT - 4,
        base,
        LEFT,
        HEIGHT - 8,
        unit,
    )


def _legend(names: Sequence[str]) -> SafeString:
    return format_html_join(
        "",
        '<rect x="{}" y="2" width="10" height="10" fill="{}"/>'
        '<text x="{}" y="11" font-size="11" fill="#333">{}</text>',
        (
            (
                WIDTH - RIGHT - 110 * (len(names) - i),
                COLORS[name],
                WIDTH - RIGHT - 110 * (len(names) - i) + 14,
                name,
            )
            for i, name in enumerate(names)
        ),
    )


def _stack(x: float, width: float, scale: float, parts: Sequence[tuple[str, int]]) -> SafeString:
    """One stacked bar, bottom up; a part of zero tokens draws nothing."""
    y = float(HEIGHT - BOTTOM)
    rects = []
    for name, value in parts:
        if value <= 0:
            continue
        h = value * scale
        y -= h
        rects.append((name, f"{x:.1f}", f"{y:.1f}", f"{width:.1f}", f"{h:.1f}", COLORS[name]))
    return format_html_join(
        "",
        '<rect class="tl-bar-{}" x="{}" y="{}" width="{}" height="{}" fill="{}"/>',
        rects,
    )


def slots(count: int) -> tuple[float, float]:
    """The slot width of ``count`` bars and each bar's width within it."""
    slot = (WIDTH - LEFT - RIGHT) / max(count, 1)
    return slot, max(slot * 0.8, 1.0)


def turn_tokens_svg(turns: Sequence[TurnBar], *, markers: Sequence[int]) -> SafeString:
    """Tokens per turn, stacked visible / hidden / compacted, with a dashed line before each turn
    index in ``markers`` (where an applied compaction's visible window starts)."""
    peak = max((t.visible + t.hidden + t.compacted for t in turns), default=0)
    scale = _scale(peak)
    slot, bar = slots(len(turns))
    groups = format_html_join(
        "",
        '<g class="tl-turn-bar"><title>{}: {} visible, {} hidden, {} compacted tokens</title>{}</g>',
        (
            (
                t.turn_id or "(outside any turn)",
                t.visible,
                t.hidden,
                t.compacted,
                _stack(
                    LEFT + i * slot,
                    bar,
                    scale,
                    (("compacted", t.compacted), ("hidden", t.hidden), ("visible", t.visible)),
                ),
            )
            for i, t in enumerate(turns)
        ),
    )
    lines = format_html_join(
        "",
        '<g class="tl-compaction-marker"><title>compaction #{}: the visible window starts here</title>'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#000" stroke-width="2" stroke-dasharray="4 3"/>'
        '<text x="{}" y="{}" font-size="11" fill="#000">#{}</text></g>',
        (
            (
                n,
                f"{LEFT + index * slot - 1:.1f}",
                TOP,
                f"{LEFT + index * slot - 1:.1f}",
                HEIGHT - BOTTOM,
                f"{LEFT + index * slot + 2:.1f}",
                TOP + 24,
                n,
            )
            for n, index in enumerate(markers, start=1)
        ),
    )
    return chart_svg(
        "Tokens per turn",
        format_html(
            "{}{}{}{}",
            axis(peak, "turns, oldest first"),
            groups,
            lines,
            _legend(("visible", "hidden", "compacted")),
        ),
    )


def render_prefix_svg(renders: Sequence[RenderBar]) -> SafeString:
    """Each render's prompt prefix, oldest first: tokens the provider could reuse from the
    previous render's cache vs new tokens."""
    peak = max((r.reused + r.new for r in renders), default=0)
    scale = _scale(peak)
    slot, bar = slots(len(renders))
    groups = format_html_join(
        "",
        '<g class="tl-render-bar"><title>{} · {}: {} reused, {} new prefix tokens</title>{}</g>',
        (
            (
                r.label,
                r.reason,
                r.reused,
                r.new,
                _stack(LEFT + i * slot, bar, scale, (("reused", r.reused), ("new", r.new))),
            )
            for i, r in enumerate(renders)
        ),
    )
    return chart_svg(
        "Reused vs new prefix tokens per render",
        format_html("{}{}{}", axis(peak, "renders, oldest first"), groups, _legend(("reused", "new"))),
    )


def chart_svg(title: str, body: SafeString) -> SafeString:
    """One chart: its frame (``WIDTH`` × ``HEIGHT``) and ``title`` around ``body``."""
    return format_html(
        '<svg class="tl-chart" role="img" viewBox="0 0 {} {}" width="100%"'
        ' xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        WIDTH,
        HEIGHT,
        title,
        body,
    )
