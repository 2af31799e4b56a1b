"""Compaction planning (pure): when to compact, where to cut, what the summary block holds.

Seed 002 "When Compaction Runs", "What Exactly Gets Summarized" and "What Compaction Produces";
DESIGN §4: "never return a context over max_tokens when a smaller valid one exists".

The planner never calls a summarizer: it returns a :class:`CompactionPlan`, the shell summarizes
``summarized`` (and ``split_prefix``) and stores the dict from
:func:`compaction.summary.block.build_summary_block`.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from compaction.cutpoint import WindowIndex
from timeline_app.domain.blocks import SUMMARY, THINKING, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.continued_header import continued_header_tokens


@dataclass(frozen=True)
class CompactionPlan:
    """One planned compaction of a visible window.

    ``summarized`` runs from just after the previous summary up to the split turn's start (or up
    to the cut); ``split_prefix`` is the part of the cut's turn before the cut (empty when the cut
    is on a turn start); ``retained`` starts at the cut. A split turn is listed in
    ``covered_turn_ids`` *and* named by ``split_turn_id``.
    """

    cut_index: int
    first_retained_seq: int
    previous_summary: Block | None
    summarized: tuple[Block, ...]
    split_prefix: tuple[Block, ...]
    retained: tuple[Block, ...]
    split_turn_id: str | None
    covered_turn_ids: tuple[str, ...]
    system_tokens: int
    before_tokens: int
    retained_tokens: int
    estimated_tokens: int
    keep_recent_tokens: int

    @property
    def is_split(self) -> bool:
        return self.split_turn_id is not None

    @property
    def compacted(self) -> tuple[Block, ...]:
        """Every block the new summary replaces (not counting the previous summary)."""
        return self.summarized + self.split_prefix

    @property
    def compacted_tokens(self) -> int:
        return sum(b.effective_tokens for b in self.compacted)

    @property
    def history_inputs(self) -> tuple[Block, ...]:
        """What the summarizer reads for the history: ``summarized`` without thinking blocks."""
        return summarizable(self.summarized)

    @property
    def split_inputs(self) -> tuple[Block, ...]:
        """What the summarizer reads for the split turn: ``split_prefix`` without thinking blocks."""
        return summarizable(self.split_prefix)


def summarizable(blocks: Sequence[Block]) -> tuple[Block, ...]:
    """The blocks a summary (and the digest) may draw on: a thinking block (``react.thinking``) is
    never summarized into text; the compaction removes it with the rest of its turn."""
    return tuple(b for b in blocks if b.type != THINKING)


def visible_tokens(window: Sequence[Block]) -> int:
    return sum(b.effective_tokens for b in window)


def rendered_tokens(window: Sequence[Block]) -> int:
    """The tokens a render of ``window`` shows (its ``tokens.visible``, no contribution filters):
    every block at its effective tokens (a block's header and ``[path: …]`` lines are in its
    tokens, the summary's too) plus the ``[TURN …] (continued)`` header the render adds before
    the first retained block when the window starts mid-turn (``rendering.continued_header``)."""
    return visible_tokens(window) + continued_header_tokens(window)


def tokens_after(plan: CompactionPlan, *, summary: Block, retained_tokens: int) -> int:
    """``system`` plus what the next render shows once ``plan`` is applied with ``summary``: the
    summary, the continued header it makes the render add (a split turn's, or a covered turn's
    whose later block is the cut), and the retained blocks. ``retained_tokens`` is what the
    retained blocks cost now (the shell counts blocks contributed since the plan too); the header
    depends only on the summary and the first retained block, which never change."""
    header = continued_header_tokens([summary, plan.retained[0]]) if plan.retained else 0
    return plan.system_tokens + summary.effective_tokens + header + retained_tokens


@dataclass(frozen=True)
class CompactionResult:
    """Before and after, both as the render counts them, and whether the compaction applies."""

    before_tokens: int
    after_tokens: int

    @property
    def accepted(self) -> bool:
        return compaction_is_accepted(self.before_tokens, self.after_tokens)


def compaction_result(plan: CompactionPlan, *, summary: Block, retained_tokens: int) -> CompactionResult:
    """The one acceptance rule (DESIGN §4): apply ``plan`` with ``summary`` only when the context
    as rendered shrinks. Blocks contributed since the plan (``retained_tokens`` above the plan's
    ``retained_tokens``) count on both sides; ``after_tokens`` is ``system`` plus the next
    render's ``tokens.visible``."""
    grown = retained_tokens - plan.retained_tokens
    return CompactionResult(
        before_tokens=plan.before_tokens + grown,
        after_tokens=tokens_after(plan, summary=summary, retained_tokens=retained_tokens),
    )


def needs_compaction(window: Sequence[Block], *, system_tokens: int, settings: RenderSettings) -> bool:
    """Seed 002: compact when ``system + blocks > threshold × max_tokens``."""
    return system_tokens + visible_tokens(window) > settings.compaction_limit


def compaction_is_accepted(before_tokens: int, after_tokens: int) -> bool:
    """A compaction is kept only when it reduces the tokens (DESIGN §4)."""
    return after_tokens < before_tokens


REJECTED_RETRY_GROWTH = 0.05
"""How much a timeline must grow, as a fraction of its ``max_tokens``, over the ``before_tokens``
of its last compaction when that one was rejected, before the sweep or a render's nudge tries it
again (5 %: 10,000 tokens at the default 200,000)."""


def worth_retrying(*, visible_tokens: int, rejected_before_tokens: int, max_tokens: int) -> bool:
    """Whether a timeline whose latest compaction was rejected (its summary would not have made
    the context smaller) is worth another background attempt: only once its visible tokens grew
    by ``REJECTED_RETRY_GROWTH × max_tokens`` since that attempt. Before that, the same summary
    would mostly be rejected again, and every retry costs a summarizer call."""
    growth = math.ceil(REJECTED_RETRY_GROWTH * max_tokens)
    return visible_tokens >= rejected_before_tokens + growth


def _previous_covered(previous: Block | None) -> list[str]:
    if previous is None:
        return []
    covered = previous.meta.get("covered_turn_ids")
    if not isinstance(covered, list):
        return []
    return [t for t in covered if isinstance(t, str) and t]


def _split_header_tokens(index: WindowIndex, cut: int, prefix_start: int) -> int:
    """The ``(continued)`` header a split cut makes the render add (as ``build_summary_block``
    will describe the split: its turn and the turn's start time)."""
    if prefix_start == cut:
        return 0
    first = index.window[cut]
    split_meta = {
        "covered_turn_ids": [first.turn_id],
        "split_turn_id": first.turn_id,
        "split_turn_ts": index.window[prefix_start].ts,
    }
    return continued_header_tokens([Block(seq=0, type=SUMMARY, meta=split_meta), first])


def _estimate(index: WindowIndex, cut: int, *, system_tokens: int, settings: RenderSettings) -> int:
    prefix_start = index.split_prefix_start(cut)
    split = prefix_start < cut
    return (
        system_tokens
        + settings.summary_max_tokens
        + (settings.split_prefix_max_tokens if split else 0)
        + _split_header_tokens(index, cut, prefix_start)
        + index.suffix_tokens[cut]
    )


def _build_plan(
    index: WindowIndex, cut: int, *, system_tokens: int, settings: RenderSettings, keep_recent_tokens: int
) -> CompactionPlan:
    window = index.window
    start = index.start
    prefix_start = index.split_prefix_start(cut)
    previous = window[start - 1] if start > 0 and window[start - 1].type == SUMMARY else None
    summarized = tuple(window[start:prefix_start])
    split_prefix = tuple(window[prefix_start:cut])
    split_turn_id = window[cut].turn_id if split_prefix else None

    covered: dict[str, None] = dict.fromkeys(_previous_covered(previous))
    for b in summarized:
        if b.turn_id:
            covered.setdefault(b.turn_id, None)
    for b in split_prefix:
        if b.turn_id:
            covered.setdefault(b.turn_id, None)

    retained_tokens = index.suffix_tokens[cut]
    return CompactionPlan(
        cut_index=cut,
        first_retained_seq=window[cut].seq,
        previous_summary=previous,
        summarized=summarized,
        split_prefix=split_prefix,
        retained=tuple(window[cut:]),
        split_turn_id=split_turn_id,
        covered_turn_ids=tuple(covered),
        system_tokens=system_tokens,
        before_tokens=system_tokens + rendered_tokens(window),
        retained_tokens=retained_tokens,
        estimated_tokens=_estimate(index, cut, system_tokens=system_tokens, settings=settings),
        keep_recent_tokens=keep_recent_tokens,
    )


def plan_at_cut(
    window: Sequence[Block],
    cut: int,
    *,
    system_tokens: int,
    settings: RenderSettings,
    keep_recent_tokens: int = 0,
) -> CompactionPlan:
    """The plan for a cut chosen elsewhere (e.g. by :func:`compaction.cutpoint.find_cut_point`)."""
    index = WindowIndex(window)
    if not index.start < cut < len(window):
        raise ValueError(f"cut {cut} outside the compactable range ({index.start}, {len(window)})")
    return _build_plan(
        index, cut, system_tokens=system_tokens, settings=settings, keep_recent_tokens=keep_recent_tokens
    )


def _candidate_cuts(index: WindowIndex, configured: int) -> Iterator[tuple[int, int]]:
    """``(cut, keep_recent_tokens)`` to try, in order: the budget ``configured`` halving down to 0;
    then every cut a budget in [0, configured] can produce, in the order of decreasing budget
    (increasing walk index). Lazy: the caller stops at the first that fits."""
    keep = configured
    while True:
        cut = index.cut_for_budget(keep)
        if cut is not None:
            yield cut, keep
        if keep == 0:
            break
        keep //= 2
    first_k = index.walk_index(configured)
    positions = index.msg_pos
    k0 = bisect_left(positions, first_k) if first_k is not None else 0
    seen: set[int] = set()
    suffix = index.msg_suffix
    for k in range(k0, len(positions)):
        if k + 1 < len(positions) and suffix[k + 1] == suffix[k]:
            continue  # a zero-token message block: no budget stops the walk here
        cut = index.cut_from_walk_index(positions[k])
        if cut is None or cut in seen:
            continue
        seen.add(cut)
        yield cut, min(configured, suffix[k])


def plan_compaction(
    window: Sequence[Block],
    *,
    system_tokens: int,
    settings: RenderSettings,
    force: bool = False,
) -> CompactionPlan | None:
    """Plan a compaction of the visible ``window``, or None (not needed and not forced, or no cut).

    The estimated result is ``system + summary_max_tokens (+ split_prefix_max_tokens and the
    ``(continued)`` header when the cut splits a turn) + retained``. The budget starts at ``settings.effective_keep_recent_tokens`` and
    halves down to 0 until the estimate fits ``settings.compaction_limit``. When no halving step
    fits, every other reachable cut (each budget between 0 and the configured one yields one) is
    checked too, keeping the one that retains the most while fitting; when nothing fits at all,
    the plan with the smallest estimate wins. One linear pass builds the index; each budget is then
    an O(log n) lookup.
    """
    index = WindowIndex(window)
    if not force and system_tokens + index.total_tokens <= settings.compaction_limit:
        return None
    if not index.msg_pos:
        return None
    limit = settings.compaction_limit
    configured = max(0, settings.effective_keep_recent_tokens)

    best: tuple[int, int, int] | None = None  # (estimate, cut, keep) with the smallest estimate
    for cut, keep in _candidate_cuts(index, configured):
        estimate = _estimate(index, cut, system_tokens=system_tokens, settings=settings)
        if estimate <= limit:
            return _build_plan(
                index, cut, system_tokens=system_tokens, settings=settings, keep_recent_tokens=keep
            )
        if best is None or estimate < best[0]:
            best = (estimate, cut, keep)

    if best is None:
        return None
    _, cut, keep = best
    return _build_plan(index, cut, system_tokens=system_tokens, settings=settings, keep_recent_tokens=keep)
