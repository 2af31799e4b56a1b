"""Cache points on the stable stream (seed 000 "Caching", seed 002, DESIGN §4).

Three points at most, as indices into the stable block list:

1. previous-turn: the last block before the current turn's first block;
2. pre-tail: the last block of round ``N-1-offset`` (0-based), only with enough rounds;
3. tail: the last block (when ``cache_last``).

The positions depend only on block types, turn ids, authors and tool call ids, never on
whether a block is hidden, so TTL pruning does not move any marker.
"""

from __future__ import annotations

from collections.abc import Sequence

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    SUMMARY,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_ATTACHMENT_META,
    USER_PROMPT,
    Block,
    is_turn_start,
)
from timeline_app.domain.settings import RenderSettings

MAX_CACHE_POINTS = 3


def _is_user_side(block: Block) -> bool:
    """Header, prompt, attachments or anything the user authored: the turn's opening group."""
    return block.type in (TURN_HEADER, USER_PROMPT, USER_ATTACHMENT, USER_ATTACHMENT_META) or (
        block.author == "user"
    )


def _opens_round(block: Block) -> bool:
    """A block that opens a round: the first block of a tool call id (its notes, call or result),
    or the turn's completion (its final round; an assistant message without tool call counts)."""
    return bool(block.tool_call_id) or block.type == ASSISTANT_COMPLETION or block.author == "assistant"


def assign_rounds(blocks: Sequence[Block]) -> list[int]:
    """The round index of each block (0-based, non-decreasing except for late tool blocks).

    A round is one tool call (the notes, call and results sharing a tool call id) or the turn's
    final round (the completion and anything after it in the turn). A turn's opening group
    (header, prompt, attachments, anything the user authored) is not a round of its own: it
    belongs to the turn's first round, so the first tool call (or the completion) after it joins
    that round. A summary is not a round either: it belongs to the round that follows it. A block
    of an already seen tool call id joins that call's round; any other block joins the current one.
    """
    rounds: list[int] = []
    current = -1
    seen_calls: dict[str, int] = {}
    # The turn whose opening group is open: its next round opener joins the current round.
    opening_turn: str | None = None
    summaries: list[int] = []

    def new_round() -> int:
        nonlocal current
        current += 1
        return current

    for index, block in enumerate(blocks):
        call_id = block.tool_call_id
        if block.type == SUMMARY:
            summaries.append(index)
            rounds.append(current)
            opening_turn = None
            continue
        if call_id and call_id in seen_calls:
            rounds.append(seen_calls[call_id])
            continue
        if not call_id and _is_user_side(block):
            if block.type == TURN_HEADER or opening_turn != block.turn_id or current < 0:
                new_round()
            opening_turn = block.turn_id
            rounds.append(current)
            continue
        if _opens_round(block):
            if opening_turn is None or opening_turn != block.turn_id or current < 0:
                new_round()
            opening_turn = None
            if call_id:
                seen_calls[call_id] = current
            rounds.append(current)
            continue
        if current < 0:
            new_round()
        rounds.append(current)
    # A summary belongs to the round that follows it (round 0 when it leads the stream).
    for index in summaries:
        following = next(
            (rounds[j] for j in range(index + 1, len(blocks)) if blocks[j].type != SUMMARY), None
        )
        rounds[index] = following if following is not None else max(rounds[index], 0)
    return rounds


def current_turn_start(blocks: Sequence[Block]) -> int | None:
    """Index of the current turn's first block: the turn of the last turn-start block.

    Walks back from the last turn-start block over the contiguous run of blocks of the same
    turn id (or, for blocks without turn id, over the contiguous header/user blocks).
    """
    last = next((i for i in range(len(blocks) - 1, -1, -1) if is_turn_start(blocks[i])), None)
    if last is None:
        return None
    turn_id = blocks[last].turn_id
    start = last
    while start > 0:
        prev = blocks[start - 1]
        if prev.type == SUMMARY:
            break
        same = prev.turn_id == turn_id if turn_id else (not prev.turn_id and _is_user_side(prev))
        if not same:
            break
        start -= 1
    return start


def cache_point_indices(
    blocks: Sequence[Block], *, settings: RenderSettings, cache_last: bool = True
) -> list[int]:
    """Indices (ascending, unique, at most 3) of the blocks that carry a cache marker."""
    if not blocks:
        return []
    points: set[int] = set()

    start = current_turn_start(blocks)
    if start is not None and start > 0:
        points.add(start - 1)

    rounds = assign_rounds(blocks)
    total_rounds = max(rounds) + 1
    offset = settings.cache_point_offset_rounds
    if total_rounds >= max(settings.cache_point_min_rounds, offset + 1):
        target = total_rounds - 1 - offset
        points.add(max(i for i, r in enumerate(rounds) if r == target))

    if cache_last:
        points.add(len(blocks) - 1)
    return sorted(points)[-MAX_CACHE_POINTS:]
