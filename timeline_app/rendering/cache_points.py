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

from .blocks import (
    ASSISTANT_COMPLETION,
    SUMMARY,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_ATTACHMENT_META,
    USER_PROMPT,
    Block,
)
from .settings import RenderSettings

MAX_CACHE_POINTS = 3


def is_turn_start(block: Block) -> bool:
    """Seed 002 §4: ``turn.header``, ``user.prompt`` or any block authored by the user."""
    return block.type in (TURN_HEADER, USER_PROMPT) or block.author == "user"


def _is_user_side(block: Block) -> bool:
    """Header, prompt, attachments or anything the user authored: the turn's opening group."""
    return block.type in (TURN_HEADER, USER_PROMPT, USER_ATTACHMENT, USER_ATTACHMENT_META) or (
        block.author == "user"
    )


def assign_rounds(blocks: Sequence[Block]) -> list[int]:
    """The round index of each block (0-based, non-decreasing except for late tool blocks).

    A round starts at a turn start (header + prompt + attachments of one turn are one round),
    at the first block of a not-yet-seen tool call id, at ``assistant.completion`` (the
    turn's final round) and right after a summary (a summary is a round of its own). A block
    of an already seen tool call id joins that call's round.
    """
    rounds: list[int] = []
    current = -1
    seen_calls: dict[str, int] = {}
    # Turn id of the header/user group that is still open (None when the group has ended).
    user_group_turn: str | None = None
    after_summary = False

    def new_round() -> int:
        nonlocal current
        current += 1
        return current

    for block in blocks:
        call_id = block.tool_call_id
        if block.type == SUMMARY:
            rounds.append(new_round())
            user_group_turn = None
            after_summary = True
            continue
        if block.type == TURN_HEADER:
            rounds.append(new_round())
            user_group_turn = block.turn_id
        elif not call_id and user_group_turn == block.turn_id and _is_user_side(block) and not after_summary:
            rounds.append(current)
        elif not call_id and is_turn_start(block):
            rounds.append(new_round())
            user_group_turn = block.turn_id
        elif call_id and call_id in seen_calls:
            rounds.append(seen_calls[call_id])
            user_group_turn = None
        elif call_id:
            seen_calls[call_id] = new_round()
            rounds.append(current)
            user_group_turn = None
        elif block.type == ASSISTANT_COMPLETION or current < 0 or after_summary:
            rounds.append(new_round())
            user_group_turn = None
        else:
            rounds.append(current)
            user_group_turn = None
        after_summary = False
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
