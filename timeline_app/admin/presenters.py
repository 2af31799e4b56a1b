"""What the conversation admin's pages show, built from the ``admin.*selectors`` reads: the facts
box and its tool links, the two charts and the render history, the context and page links, and a
render's text stream. Plain dicts and strings for the templates (auto-escaped there); no writes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib.admin.utils import quote
from django.core.paginator import Page
from django.urls import reverse
from django.utils.http import urlencode

from timeline_app.admin import charts, display, page_selectors
from timeline_app.models import Compaction, Conversation, Operation, RenderRecord, Timeline
from timeline_app.rendering import replay, window_shape
from timeline_app.rendering.formats import debug_text
from timeline_app.rendering.pipeline import Rendered
from timeline_app.selectors.settings import settings_resolve

if TYPE_CHECKING:
    from timeline_app.models import WindowedTimeline

PREVIEW_MAX_CHARS = 200_000
# The charts and the render history read at most this many turns and renders.
CHART_TURNS = 200
HISTORY_RENDERS = 50


def timeline_facts(conversation: Conversation, timeline: WindowedTimeline) -> dict[str, Any]:
    """The facts box of the conversation page and the links of its tools."""
    resolved = settings_resolve(conversation_id=conversation.pk, overrides=conversation.settings)
    settings = resolved.settings
    visible = timeline.visible_tokens
    history = (
        reverse("admin:timeline_app_compaction_changelist")
        + "?"
        + urlencode({"timeline__id__exact": timeline.pk})
    )
    return {
        "settings": settings,
        "ignored_settings": resolved.ignored,
        "settings_json": json.dumps(conversation.settings, indent=2, sort_keys=True, ensure_ascii=False),
        "visible_tokens": visible,
        "visible_percent": round(100 * visible / settings.max_tokens, 1) if settings.max_tokens else 0,
        "compaction_limit": settings.compaction_limit,
        "started_at": display.utc(conversation.started_at),
        "last_activity_at": display.utc(conversation.last_activity_at),
        "cache_touched_at": display.utc(timeline.cache_last_touch_at),
        "render_url": sub_url("render", conversation, timeline),
        "compact_url": sub_url("compact", conversation, timeline),
        "revert_url": sub_url("revert", conversation, timeline),
        "export_url": sub_url("export", conversation, timeline),
        "history_url": history,
        "blocks_url": display.block_changelist_url(timeline=timeline),
        "hidden_blocks_url": display.block_changelist_url(timeline=timeline, hidden__exact="1"),
    }


def timeline_charts(
    timeline: WindowedTimeline, applied: list[Compaction], renders: list[RenderRecord]
) -> dict[str, Any]:
    """The two charts and the render history table (two bounded queries: turns, renders)."""
    turns = page_selectors.timeline_turn_tokens(timeline=timeline, limit=CHART_TURNS)
    markers = []
    for compaction in applied:
        index = next((i for i, t in enumerate(turns) if t["last_seq"] >= compaction.first_retained_seq), None)
        if index is not None and (index > 0 or turns[0]["first_seq"] > 1):
            markers.append(index)
    oldest_first = list(reversed(renders))
    history = [
        {
            "record": record,
            "at": display.utc(record.rendered_at),
            "new": max(record.prefix_tokens - record.reused_prefix_tokens, 0),
            "pruning": display.pruning_words(record.pruning_status),
            "url": reverse(
                "admin:timeline_app_conversation_past_render",
                args=[quote(timeline.conversation_id), record.pk],
            )
            + "?"
            + urlencode({"context": timeline.name}),
            "path_url": display.changed_block_url(timeline=timeline, path=record.first_changed_path)
            if record.first_changed_path
            else "",
        }
        for record in renders
    ]
    return {
        "turn_chart": charts.turn_tokens_svg(
            [
                charts.TurnBar(t["turn_id"], int(t["visible"]), int(t["hidden_tokens"]), int(t["compacted"]))
                for t in turns
            ],
            markers=markers,
        ),
        "chart_turn_count": len(turns),
        "render_chart": charts.render_prefix_svg(
            [
                charts.RenderBar(
                    display.utc(r.rendered_at),
                    r.reason,
                    r.reused_prefix_tokens,
                    max(r.prefix_tokens - r.reused_prefix_tokens, 0),
                )
                for r in oldest_first
            ]
        ),
        "render_history": history,
        "history_limit": HISTORY_RENDERS,
        "chart_turn_limit": CHART_TURNS,
    }


OPERATIONS_SHOWN = 50
"""Entries of the operations log the conversation page lists (newest first)."""


def operation_rows(rows: list[Operation]) -> list[dict[str, Any]]:
    """The operations log as the conversation page lists it: one line of figures per entry."""
    return [
        {
            "entry": row,
            "at": display.utc(row.at),
            "tokens": "—"
            if row.tokens_before is None and row.tokens_after is None
            else f"{_count(row.tokens_before)} → {_count(row.tokens_after)}",
            "seqs": ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in row.seq_ranges) or "—",
            "paths": row.paths[:3],
            "more_paths": len(row.paths) - 3 + int(row.details.get("paths_omitted", 0)),
            "why": "; ".join(
                [
                    *([str(row.details["reason"])] if row.details.get("reason") else []),
                    *(
                        [f"threshold {row.details['threshold_tokens']:,}"]
                        if isinstance(row.details.get("threshold_tokens"), int)
                        else []
                    ),
                    *(
                        f"{key}: {json.dumps(moved[0])} → {json.dumps(moved[1])}"
                        for key, moved in (row.details.get("settings") or {}).items()
                    ),
                    *([f"from {row.details['branched_from']}"] if row.details.get("branched_from") else []),
                ]
            ),
        }
        for row in rows
    ]


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def context_links(conversation: Conversation, contexts: list[WindowedTimeline]) -> list[dict[str, Any]]:
    return [
        {
            "timeline": context,
            "url": display.conversation_url(conversation, context=context.name),
            "cache_touched_at": display.utc(context.cache_last_touch_at),
        }
        for context in contexts
    ]


def page_links(conversation: Conversation, timeline: Timeline, page: Page[Any]) -> list[dict[str, Any]]:
    paginator: Any = page.paginator
    numbers = paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)
    ellipsis = paginator.ELLIPSIS
    return [
        {
            "number": number,
            "current": number == page.number,
            "ellipsis": number == ellipsis,
            "url": ""
            if number == ellipsis
            else display.conversation_url(conversation, context=timeline.name, page=int(number)),
        }
        for number in numbers
    ]


def sub_url(name: str, conversation: Conversation, timeline: Timeline) -> str:
    url = reverse(f"admin:timeline_app_conversation_{name}", args=[quote(conversation.pk)])
    return url + "?" + urlencode({"context": timeline.name})


def stream_lines(rendered: Rendered | None) -> list[dict[str, Any]]:
    """A render's parts as the text stream with ``=>[k]`` after each cache point (an OpenAI
    render: one JSON message a line; a native request: its fields and then one message or input
    item a line, the ``cache_control`` markers in place), at most ``PREVIEW_MAX_CHARS``."""
    if rendered is None:
        return []
    if rendered.request is not None:
        stream = native_request_text(rendered.request)
    elif rendered.debug is not None:
        stream = rendered.debug
    elif rendered.cache_points or all("text" in part for part in rendered.blocks):
        stream = debug_text(rendered.blocks, rendered.cache_points)
    else:
        stream = "\n".join(
            json.dumps(message, ensure_ascii=False, sort_keys=True) for message in rendered.blocks
        )
    return text_lines(stream) or [{"text": "", "mark": False}]


def native_request_text(request: dict[str, Any]) -> str:
    """A native request body as lines: each top-level field but the list of messages (``system``,
    ``tools``…), then each message (``messages``) or input item (``input``) on its own line."""
    items_key = "messages" if "messages" in request else "input"
    lines = [
        f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for key, value in request.items()
        if key != items_key
    ]
    lines += [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in request.get(items_key) or []]
    return "\n".join(lines)


def text_lines(stream: str) -> list[dict[str, Any]]:
    """A text stream as lines, each ``=>[k]`` cache point line marked. At most
    ``PREVIEW_MAX_CHARS``: a large context must not make a page of hundreds of megabytes; the rest
    is named, not shown."""
    lines = [
        {"text": line, "mark": line.startswith("=>[") and line.endswith("]")}
        for line in (stream[:PREVIEW_MAX_CHARS].split("\n") if stream else [])
    ]
    if len(stream) > PREVIEW_MAX_CHARS:
        lines.append(
            {"text": f"… {len(stream) - PREVIEW_MAX_CHARS} more characters not shown", "mark": False}
        )
    return lines


def recorded_render(record: RenderRecord) -> replay.Recorded:
    """What a render record kept, as the replay's input (``window`` is None for a record written
    before render inputs were kept)."""
    inputs = record.render_inputs if isinstance(record.render_inputs, dict) else {}
    shape = (
        window_shape.WindowShape(
            summary_seq=record.summary_seq,
            first_seq=record.window_first_seq,
            last_seq=record.window_last_seq,
            skipped_seqs=bytes(record.window_skipped_seqs),
            hidden_seqs=bytes(record.hidden_seqs),
            hidden_count=record.hidden_count,
        )
        if inputs
        else None
    )
    return replay.Recorded(
        segment_count=record.segment_count,
        segment_stride=record.segment_stride,
        segment_digests=bytes(record.segment_digests),
        segment_seqs=bytes(record.segment_seqs),
        segment_seed=bytes(record.segment_seed),
        cache_points=list(record.cache_points or []),
        system_tokens=record.system_tokens,
        prefix_tokens=record.prefix_tokens,
        inputs=inputs,
        hidden_count=record.hidden_count,
        window=shape,
    )
