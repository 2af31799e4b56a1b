"""The continued turn header (seed 002 "What Compaction Produces", pure): the ``[TURN <id>] ts=<ts>
(continued)`` line a render shows before the first retained block when a compaction cut its turn.

Nothing is stored: the render adds it (``pipeline.render_window``) and the compaction planner counts
its tokens (``compaction.planner``). Its text is the turn header's block text with the
``CONTINUED_META`` flag (``domain.block_text``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from timeline_app.domain.block_text import CONTINUED_META, block_text
from timeline_app.domain.blocks import SUMMARY, TURN_HEADER, Block, turn_header_path
from timeline_app.domain.tokens import count_text_tokens


def _summarized_turns(summary: Block) -> set[str]:
    covered = summary.meta.get("covered_turn_ids")
    turns = {t for t in covered if isinstance(t, str)} if isinstance(covered, list) else set()
    split = summary.meta.get("split_turn_id")
    if isinstance(split, str):
        turns.add(split)
    return turns


def continued_turn_header(blocks: Sequence[Block]) -> Block | None:
    """The header a window that starts mid-turn renders before its first retained block.

    When the first block after the latest summary belongs to a turn that summary covers (a
    split cut, or a cut on a later user block of the turn) and is not that turn's header, the
    stored header was compacted: the render shows ``[TURN <id>] ts=<ts> (continued)`` instead.
    Nothing is stored; the text depends only on stored values (the summary's ``split_turn_ts``,
    else the first retained block's ``ts``), so the render stays byte-stable.
    """
    latest = next((i for i in range(len(blocks) - 1, -1, -1) if blocks[i].type == SUMMARY), None)
    if latest is None or latest + 1 >= len(blocks):
        return None
    summary, first = blocks[latest], blocks[latest + 1]
    if not first.turn_id or first.type == TURN_HEADER or first.turn_id not in _summarized_turns(summary):
        return None
    ts = summary.meta.get("split_turn_ts") if summary.meta.get("split_turn_id") == first.turn_id else None
    header = Block(
        seq=first.seq,
        type=TURN_HEADER,
        turn_id=first.turn_id,
        author="system",
        ts=ts if isinstance(ts, str) and ts else first.ts,
        path=turn_header_path(first.turn_id),
        meta={CONTINUED_META: True},
    )
    return replace(header, tokens=count_text_tokens(block_text(header)))


def continued_header_tokens(blocks: Sequence[Block]) -> int:
    """The tokens :func:`continued_turn_header` adds to a render of ``blocks`` (0: none): what the
    compaction planner counts before and after a cut."""
    header = continued_turn_header(blocks)
    return header.tokens if header is not None else 0


def with_continued_header(blocks: Sequence[Block]) -> list[Block]:
    """``blocks`` with :func:`continued_turn_header` inserted before the first retained block."""
    header = continued_turn_header(blocks)
    if header is None:
        return list(blocks)
    at = next(i for i in range(len(blocks) - 1, -1, -1) if blocks[i].type == SUMMARY) + 1
    return [*blocks[:at], header, *blocks[at:]]
