"""TTL pruning plan (seed 002 "Render Pipeline Order" step 1, DESIGN §4).

When the provider's prompt cache has gone cold (``now - last_touch > ttl - buffer``), old
bulky blocks are hidden behind a one-line replacement that names their path, so the next
render is cheaper and the agent can read them back by path. Pure: ``now`` is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal, NamedTuple

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    SUMMARY,
    THINKING,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
    Block,
)
from timeline_app.domain.costs import block_tokens, hidden_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.text import ellipsize

TtlStatus = Literal["disabled", "armed", "fresh", "no_effect", "pruned"]
TTL_REASON = "ttl"
BULKY_TOKENS = 1_000
HINT_MAX_CHARS = 80
# A thinking block is never pruned: a replacement text cannot stand in for its signed original,
# and a hidden one is left out of every render (compaction removes it with its turn).
NEVER_PRUNED = frozenset({TURN_HEADER, USER_PROMPT, SUMMARY, ASSISTANT_COMPLETION, THINKING})


@dataclass(frozen=True)
class Hide:
    """One block to hide: its seq, path, replacement text, reason and the hidden rendering's tokens."""

    seq: int
    path: str
    replacement_text: str
    reason: str
    replacement_tokens: int


@dataclass(frozen=True)
class TtlDecision:
    status: TtlStatus
    hides: tuple[Hide, ...] = ()


def is_expired(*, now: datetime, last_touch: datetime, settings: RenderSettings) -> bool:
    fresh_for = timedelta(seconds=settings.cache_ttl_seconds - settings.cache_ttl_buffer_seconds)
    return now - last_touch > fresh_for


def _hint(block: Block) -> str:
    first = next((line.strip() for line in block.text.splitlines() if line.strip()), "")
    if not first and block.data:
        first = f"{block.mime or 'binary'} payload, b64_len={len(block.data)}"
    return ellipsize(first, HINT_MAX_CHARS) or block.type


def replacement_text_for(block: Block) -> str:
    """``[pruned after cache expiry] <path> — <hint> (read it back by path)``."""
    where = block.path or f"{block.type}#{block.seq}"
    return f"[pruned after cache expiry] {where} — {_hint(block)} (read it back by path)"


def is_prunable(block: Block) -> bool:
    """Not yet hidden, not a structural block, and a tool result or bulky (binary or > 1,000 tokens)."""
    if block.hidden or block.type in NEVER_PRUNED:
        return False
    return block.type == TOOL_RESULT or block.is_binary or block.tokens > BULKY_TOKENS


def ttl_replacement_tokens(block: Block) -> int:
    """What ``block`` will cost once TTL pruning hides it, or 0 when that is not known yet.

    Computed when a block is written and kept as its ``replacement_tokens`` while it is visible,
    so the first render after the TTL, which hides thousands of blocks at once, tokenizes none of
    them (issue 13). 0 for a block pruning never hides, and for one without a path (its
    replacement names it by seq, which it has only once stored): pruning counts those itself."""
    if not block.path or not is_prunable(block):
        return 0
    return hidden_tokens(block, replacement_text_for(block))


class StoredCosts(NamedTuple):
    """What a block is stored with besides its content: its ``tokens`` rendered visible, and as its
    ``replacement_tokens`` what it costs hidden."""

    tokens: int
    replacement_tokens: int


def stored_costs(block: Block) -> StoredCosts:
    """The costs a block is stored with, computed once when it is written (appended, imported,
    written by compaction): its tokens, then ``stored_replacement_tokens`` with them (pruning
    hides bulky blocks)."""
    tokens = block_tokens(block)
    return StoredCosts(tokens, stored_replacement_tokens(replace(block, tokens=tokens)))


def stored_replacement_tokens(block: Block) -> int:
    """What ``block`` (with its tokens) costs hidden: behind its own replacement text when it is
    hidden (an imported hidden block), else once TTL pruning hides it (``ttl_replacement_tokens``;
    what a block shown again is stored with)."""
    if block.hidden:
        return hidden_tokens(block, block.replacement_text)
    return ttl_replacement_tokens(block)


def plan_ttl_pruning(
    blocks: Sequence[Block], *, now: datetime, last_touch: datetime | None, settings: RenderSettings
) -> TtlDecision:
    """Decide which blocks to hide because the prompt cache has expired.

    Turns are ordered by first appearance in ``blocks``; the last ``ttl_keep_recent_turns``
    of them are kept intact. Blocks without a turn id are never pruned.
    """
    if settings.cache_ttl_seconds <= 0:
        return TtlDecision("disabled")
    if last_touch is None:
        return TtlDecision("armed")
    if not is_expired(now=now, last_touch=last_touch, settings=settings):
        return TtlDecision("fresh")

    turn_order = list(dict.fromkeys(block.turn_id for block in blocks if block.turn_id))
    keep = settings.ttl_keep_recent_turns
    kept = set(turn_order[max(0, len(turn_order) - keep) :]) if keep > 0 else set()

    hides: list[Hide] = []
    for block in blocks:
        if not block.turn_id or block.turn_id in kept or not is_prunable(block):
            continue
        text = replacement_text_for(block)
        hides.append(
            Hide(
                seq=block.seq,
                path=block.path,
                replacement_text=text,
                reason=TTL_REASON,
                replacement_tokens=block.replacement_tokens or hidden_tokens(block, text),
            )
        )
    return TtlDecision("pruned" if hides else "no_effect", tuple(hides))


def apply_hides(blocks: Sequence[Block], hides: Sequence[Hide]) -> list[Block]:
    """The blocks with the given hides applied (a convenience for the shell and tests)."""
    by_seq = {h.seq: h for h in hides}
    out: list[Block] = []
    for block in blocks:
        hide = by_seq.get(block.seq)
        if hide is None:
            out.append(block)
        else:
            out.append(
                block.hide(
                    replacement_text=hide.replacement_text,
                    reason=hide.reason,
                    replacement_tokens=hide.replacement_tokens,
                )
            )
    return out
