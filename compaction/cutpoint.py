"""Compaction cut points (pure): seed 002 "Exact Cut-Point Rules".

A *cut* is the index, in the visible window, of the first block that stays visible after
compaction. Everything between the previous summary (if any) and the cut is summarized.

The rules, in order:

1. Candidates (:func:`is_cut_point_block`): never a tool result or a summary; always a user prompt,
   an assistant completion, a tool call or a turn header; otherwise any block whose author is
   ``user``/``assistant`` or any other author that is present and not ``system``/``tool``.
2. Message blocks (:func:`is_message_block`) count towards the "keep recent" budget: the
   candidates plus tool results.
3. Walk backward from the end accumulating the effective tokens of message blocks until the sum
   reaches ``keep_recent_tokens``; take the first candidate at or after that index; then backtrack
   over non-message blocks, stopping just after a message block or a summary.
4. A turn start (:func:`timeline_app.domain.blocks.is_turn_start`) is a ``turn.header``, a ``user.prompt`` or any block authored
   by ``user``. A cut elsewhere splits its turn (see :mod:`compaction.planner`).
5. Thinking (ours, DESIGN "Native formats and reasoning"): a ``react.thinking`` block is never a
   candidate (it counts towards the budget like a message block), and a cut never separates it
   from the rest of its assistant message: a cut that lands after a thinking block in the same
   assistant run (no tool result, turn start or summary between them) moves back onto the run's
   first such thinking block, so the block, its text and its ``tool_use`` stay or go together.

The walk is a single backward pass over the window; :class:`WindowIndex` precomputes everything
once so the planner can evaluate many budgets in O(log n) each.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    SUMMARY,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
    Block,
    is_turn_start,
)

_ACCEPTED_TYPES = frozenset({USER_PROMPT, ASSISTANT_COMPLETION, TOOL_CALL, TURN_HEADER})
_REJECTED_TYPES = frozenset({TOOL_RESULT, SUMMARY})
_CONVERSATION_AUTHORS = frozenset({"user", "assistant"})
_NON_CUT_AUTHORS = frozenset({"system", "tool"})


def is_cut_point_block(block: Block) -> bool:
    """Seed 002 rule 1: may the retained window start at this block? Never a thinking block."""
    if block.type in _REJECTED_TYPES or block.type == THINKING:
        return False
    if block.type in _ACCEPTED_TYPES:
        return True
    if block.author in _CONVERSATION_AUTHORS:
        return True
    return bool(block.author) and block.author not in _NON_CUT_AUTHORS


def is_message_block(block: Block) -> bool:
    """Seed 002 rule 2: does this block count towards the recent-tokens budget? (A thinking block
    does: it is part of its assistant message.)"""
    if block.type in (TOOL_RESULT, THINKING):
        return True
    return is_cut_point_block(block)


def first_content_index(window: Sequence[Block]) -> int:
    """Index of the first block after the latest summary in ``window`` (0 when there is none)."""
    for i in range(len(window) - 1, -1, -1):
        if window[i].type == SUMMARY:
            return i + 1
    return 0


class WindowIndex:
    """Everything the cut-point rules need about one window, computed in two linear passes.

    * ``start``: first index after the latest summary (the previous summary is never summarized
      again and the cut never goes at or before it);
    * message-block positions and the message tokens from each of them to the end;
    * the next candidate at or after each index, the last candidate before each index;
    * for each index, the last message block or summary before it (the backtrack stop);
    * suffix sums of effective tokens (what a cut retains);
    * for each index, where its turn segment begins (for split-turn prefixes): a new segment
      starts where the turn id changes or where a run of turn-start blocks begins.
    """

    def __init__(self, window: Sequence[Block]):
        self.window = window
        n = len(window)
        self.start = first_content_index(window)
        start = self.start

        candidate = [False] * n
        message = [False] * n
        for i in range(start, n):
            b = window[i]
            c = is_cut_point_block(b)
            candidate[i] = c
            message[i] = c or b.type in (TOOL_RESULT, THINKING)

        # Rule 5: for each index, the first thinking block of its assistant run before it (-1).
        self.thinking_before = [-1] * n
        run_thinking = -1
        for i in range(start, n):
            b = window[i]
            if b.type == TOOL_RESULT or b.type == SUMMARY or is_turn_start(b):
                run_thinking = -1
            self.thinking_before[i] = run_thinking
            if b.type == THINKING and run_thinking < 0:
                run_thinking = i

        # Backward pass: suffix tokens, next candidate, message positions with their suffix sums.
        self.suffix_tokens = [0] * (n + 1)
        self.next_candidate = [n] * (n + 1)
        msg_pos_rev: list[int] = []
        msg_suffix_rev: list[int] = []
        acc_msg = 0
        nxt = n
        for i in range(n - 1, -1, -1):
            tokens = window[i].effective_tokens
            self.suffix_tokens[i] = self.suffix_tokens[i + 1] + tokens
            if candidate[i]:
                nxt = i
            self.next_candidate[i] = nxt
            if message[i]:
                acc_msg += tokens
                msg_pos_rev.append(i)
                msg_suffix_rev.append(acc_msg)
        # Ascending positions; ``msg_suffix`` is non-increasing. ``_neg_suffix`` is non-decreasing.
        self.msg_pos = msg_pos_rev[::-1]
        self.msg_suffix = msg_suffix_rev[::-1]
        self._neg_suffix = [-s for s in self.msg_suffix]

        # Forward pass: last candidate before i, backtrack stop before i, turn-segment start.
        self.prev_candidate = [-1] * (n + 1)
        self.prev_stop = [-1] * (n + 1)
        self.segment_start = [0] * n
        last_cand = -1
        last_stop = start - 1  # the summary (or -1 when there is none)
        for i in range(n):
            self.prev_candidate[i] = last_cand
            self.prev_stop[i] = last_stop
            b = window[i]
            if i < start:
                self.segment_start[i] = i
                continue
            prev = window[i - 1] if i > start else None
            if prev is None or prev.turn_id != b.turn_id or (is_turn_start(b) and not is_turn_start(prev)):
                self.segment_start[i] = i
            else:
                self.segment_start[i] = self.segment_start[i - 1]
            if candidate[i]:
                last_cand = i
            if message[i]:
                last_stop = i
        self.prev_candidate[n] = last_cand
        self.prev_stop[n] = last_stop

    @property
    def total_tokens(self) -> int:
        return self.suffix_tokens[0]

    @property
    def message_tokens(self) -> int:
        """Message tokens after the latest summary: the most any budget can accumulate."""
        return self.msg_suffix[0] if self.msg_suffix else 0

    def walk_index(self, keep_recent_tokens: int) -> int | None:
        """Rule 3, first half: the message block where the backward sum reaches the budget."""
        # Largest k with msg_suffix[k] >= keep  <=>  largest k with -msg_suffix[k] <= -keep.
        k = bisect_right(self._neg_suffix, -keep_recent_tokens) - 1
        if k < 0:
            return None
        return self.msg_pos[k]

    def cut_from_walk_index(self, idx: int) -> int | None:
        """Rule 3, second half, plus the header refinement and the nothing-to-summarize check."""
        n = len(self.window)
        cut = self.next_candidate[idx]
        if cut >= n:
            # No candidate at or after the walk index (the tail is tool results or system blocks):
            # retain a little more rather than nothing — the last candidate before it.
            cut = self.prev_candidate[idx]
            if cut < self.start:
                return None
        # Backtrack over non-message blocks; stop just after a message block or a summary.
        cut = max(self.prev_stop[cut] + 1, self.start)
        # Refinement: a retained turn keeps its header.
        if cut - 1 >= self.start:
            block, prev = self.window[cut], self.window[cut - 1]
            if (
                block.type != TURN_HEADER
                and is_turn_start(block)
                and prev.type == TURN_HEADER
                and prev.turn_id == block.turn_id
            ):
                cut -= 1
        # Rule 5: keep a thinking block with the rest of its assistant message.
        if self.thinking_before[cut] >= 0:
            cut = self.thinking_before[cut]
        if cut <= self.start:
            return None
        return cut

    def cut_for_budget(self, keep_recent_tokens: int) -> int | None:
        idx = self.walk_index(keep_recent_tokens)
        if idx is None:
            return None
        return self.cut_from_walk_index(idx)

    def split_prefix_start(self, cut: int) -> int:
        """Where the prefix of the cut's turn begins; ``cut`` itself when the cut is not a split.

        The cut splits its turn when the cut block is not a turn start, has a turn id, and the
        block before it belongs to the same turn. The prefix runs back over that turn's blocks to
        its turn start — the first of a run of consecutive turn-start blocks, so a header, its
        prompt and user attachments stay together — or to the first block of the turn's run, or
        to the window start.
        """
        block = self.window[cut]
        if is_turn_start(block) or not block.turn_id or cut <= self.start:
            return cut
        if self.window[cut - 1].turn_id != block.turn_id:
            return cut
        return self.segment_start[cut - 1]


def find_cut_point(window: Sequence[Block], keep_recent_tokens: int) -> int | None:
    """Index of the first retained block, or None when there is no valid cut.

    ``window`` is the visible stream, possibly starting with the previous summary. Seed 002:

    * walk backward accumulating ``effective_tokens`` of message blocks until the sum is
      ``>= keep_recent_tokens`` (None when it never gets there: nothing old enough to compact);
    * take the first candidate cut point at or after that index (when the tail holds no candidate
      at all, the last candidate before it — our choice; the seed does not cover that case);
    * backtrack while the previous block is neither a message block nor a summary.

    Documented refinement (ours): when the cut is a turn start (e.g. the ``user.prompt``) and the
    block just before it is that same turn's ``turn.header``, the cut moves onto the header so
    that a retained turn keeps its header.

    Returns None when the cut would leave nothing to summarize (cut at or before the first block
    after the summary). The returned block is never a tool result and never a summary.
    """
    return WindowIndex(window).cut_for_budget(keep_recent_tokens)
