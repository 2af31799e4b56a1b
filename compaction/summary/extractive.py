"""The extractive summarizer (pure): deterministic, offline and fast — the embedded default and the
fallback whenever an LLM summarizer fails. It is *progressive* (seed 002): it folds the previous
summary's lines into the new one, so a chain of compactions keeps the earliest goals and paths."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from compaction.summary import sections
from compaction.summary.base import Purpose
from compaction.summary.budget import (
    PREVIOUS_AGE,
    Lines,
    artifact_lines,
    drop_sequence,
    fit,
    protected_requests,
)
from compaction.summary.cues import LABEL, block_kind
from compaction.summary.extract import (
    LINE_CHARS,
    constraint_sentences,
    decision_sentences,
    error_of,
    first_sentence,
    identifier_lines,
    pending_steps,
    salient_texts,
    visible_text,
)
from timeline_app.domain.blocks import USER_PROMPT, Block
from timeline_app.domain.text import one_line


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """Deterministic extractive summary in the sections of :mod:`compaction.summary.sections`:
    the previous summary's lines first (per section, whichever summarizer wrote it), user requests
    verbatim (whitespace collapsed, at most 600 characters each; short follow-ups left out), the
    user's standing instructions verbatim (sentences with a cue such as always, never, only, must,
    budget), the active plan's pending steps, decisions (the assistant's sentences that give a
    reason or say what it chose), errors, artifacts (files attached or passed to a tool, with the
    last action on each), the key identifiers of the compacted texts (those the conversation
    states before those only listed inside a tool result), and every path and tool call id —
    within ``max_tokens``, dropping the least needed lines first (see ``drop_sequence``) and
    truncating last. A split turn's prefix summary has no title and ``###`` headings: it goes
    under the history's "Turn Context (split turn)" heading.

    Cost is linear in the number of blocks with small constants: lines are bounded, token counts
    are estimated per line and only the final text (≈ max_tokens) is tokenized.
    """

    name: str = "extractive"
    model: str = "extractive-v1"

    def summarize(
        self,
        *,
        blocks: Sequence[Block],
        previous_summary: str | None,
        max_tokens: int,
        purpose: Purpose = "history",
    ) -> str:
        """The previous summary's lines, the blocks' lines (:func:`collect`), the identifiers
        ranked (:func:`rank_identifiers`), then the least needed lines dropped to fit."""
        state = Lines.from_previous(previous_summary)
        previous_identifiers = list(state.lines[sections.IDENTIFIERS.key])
        previous_progress = len(state.lines[sections.PROGRESS.key])
        seen = collect(blocks, state)
        key = sections.ARTIFACTS.key
        state.lines[key], state.ages[key] = artifact_lines(state.lines[key], state.ages[key], blocks)
        stated = rank_identifiers(blocks, state, previous_identifiers, seen)
        order = drop_sequence(
            state, stated_identifiers=stated, previous_progress=previous_progress, max_tokens=max_tokens
        )
        if purpose == "split_turn":
            return fit("", state.lines, max_tokens, order, level=3)
        return fit(sections.SUMMARY_TITLE, state.lines, max_tokens, order)


# --------------------------------------------------------------------------------------------
# The collect pass: one pass over the blocks.


@dataclass
class Seen:
    """The identifiers the collect pass met: each block's (in its visible text), and the latest
    seq at which a text that matters states each (not only inside a tool result's listing)."""

    found_by_block: list[list[str]] = field(default_factory=list)
    stated: dict[str, int] = field(default_factory=dict)


def _label(block: Block) -> str:
    return f"[{block.turn_id}] " if block.turn_id else ""


def _add_request(block: Block, text: str, state: Lines) -> None:
    if text.strip():
        state.add(sections.GOALS, f"- {_label(block)}{one_line(text, LINE_CHARS)}", block.seq)
    if block.type == USER_PROMPT:
        for sentence in constraint_sentences(text):
            state.add(sections.CONSTRAINTS, f"- {sentence}", block.seq)


def _add_completion(block: Block, text: str, state: Lines) -> None:
    chosen = decision_sentences(text)
    for sentence in chosen:
        state.add(sections.DECISIONS, f"- {_label(block)}{sentence}", block.seq)
    if not chosen:
        state.add(sections.PROGRESS, f"- {_label(block)}{first_sentence(text)}", block.seq)


def _set_next_steps(block: Block, text: str, state: Lines) -> None:
    steps = pending_steps(block)
    if steps is not None:
        head = [f"- plan `{block.path}`, pending:"] if block.path and steps else []
        state.replace(sections.NEXT_STEPS, [*head, *(f"- [ ] {step}" for step in steps)], block.seq)


def _nothing(block: Block, text: str, state: Lines) -> None:
    return None


#: What each kind of block (``cues.BLOCK_KINDS``) writes.
WRITERS: dict[str, Callable[[Block, str, Lines], None]] = {
    "attachment": _nothing,
    "acknowledgement": _nothing,
    "request": _add_request,
    "completion": _add_completion,
    "plan": _set_next_steps,
}


def _add_path(block: Block, state: Lines) -> None:
    tc = block.tool_call_id
    if block.path:
        extra: list[str] = []
        if tc and tc not in block.path:
            extra.append(f"tool_call_id {tc}")
        tool_id = block.meta.get("tool_id")
        if isinstance(tool_id, str) and tool_id:
            extra.append(f"tool {tool_id}")
        if block.hidden:
            extra.append("hidden")
        line = f"- `{block.path}`" + (f" ({', '.join(extra)})" if extra else "")
        state.add(sections.PATHS, line, block.seq)
    elif tc:
        state.add(sections.PATHS, f"- tool_call_id `{tc}` ({block.type})", block.seq)


def collect(blocks: Sequence[Block], state: Lines) -> Seen:
    """One pass: each block's line by its kind (``cues.block_kind``: a request, the user's
    standing instructions, decisions or progress, the plan's pending steps), its error, its path
    or tool call id, and the identifiers it states."""
    seen = Seen()
    for b in blocks:
        text = visible_text(b)
        kind = block_kind(b, text)
        if kind is not None:
            WRITERS[kind](b, text, state)
        error = error_of(b)
        if error is not None:
            state.add(sections.ERRORS, f"- `{b.path or b.type}`: {error}", b.seq)
        found = sections.identifiers_in(text)
        seen.found_by_block.append(found)
        salient, _listing = salient_texts(b)
        for token in found if salient is text else sections.identifiers_in(salient):
            seen.stated[token] = b.seq
        _add_path(b, state)
    return seen


# --------------------------------------------------------------------------------------------
# The identifier ranking


def rank_identifiers(
    blocks: Sequence[Block], state: Lines, previous_identifiers: list[str], seen: Seen
) -> int:
    """Set the "Key identifiers" lines of ``state``: the stated ones (and the previous summary's)
    first, newest first, those met only inside listings last. Returns how many are stated."""
    goals = state.lines[sections.GOALS.key]
    protected_at = {0, *protected_requests(goals)}
    ranked = _ranked_lines(blocks, goals, protected_at, previous_identifiers, seen)
    _add_older_request_identifiers(ranked, state, protected_at, previous_identifiers, seen.stated)
    age_of = _identifier_ages(ranked, state, previous_identifiers, seen.stated)
    first = [line for line in ranked if line in age_of]
    first.sort(key=lambda line: -age_of[line])
    rest = [line for line in ranked if line not in age_of]
    state.lines[sections.IDENTIFIERS.key] = first + rest
    state.ages[sections.IDENTIFIERS.key] = [age_of[line] for line in first] + [0] * len(rest)
    return len(first)


def _ranked_lines(
    blocks: Sequence[Block],
    goals: list[str],
    protected_at: set[int],
    previous_identifiers: list[str],
    seen: Seen,
) -> list[str]:
    """Every identifier line best ranked first, less those a request kept longer than the
    identifiers quotes already (the first request and the protected latest ones)."""
    protected = [goals[i] for i in sorted(protected_at) if i < len(goals)]
    quoted = {f"- {token}" for token in sections.identifiers_in("\n".join(protected))}
    return [
        line
        for line in identifier_lines(blocks, previous_identifiers, seen.found_by_block)
        if line in previous_identifiers or line not in quoted
    ]


def _add_older_request_identifiers(
    ranked: list[str],
    state: Lines,
    protected_at: set[int],
    previous_identifiers: list[str],
    stated: dict[str, int],
) -> None:
    """The identifiers of an older request (it may be dropped) are listed from now on, as recent
    as that request."""
    goals = state.lines[sections.GOALS.key]
    goal_ages = state.ages[sections.GOALS.key]
    for i, goal in enumerate(goals):
        if i in protected_at:
            continue
        for token in sections.identifiers_in(LABEL.sub("", goal, count=1)):
            stated[token] = max(stated.get(token, goal_ages[i]), goal_ages[i])
            if f"- {token}" not in ranked and not any(token in line for line in previous_identifiers):
                ranked.append(f"- {token}")


def _identifier_ages(
    ranked: list[str], state: Lines, previous_identifiers: list[str], stated: dict[str, int]
) -> dict[str, int]:
    """The age of each stated line (a previous summary's line: its age there); listed-only lines
    have none."""
    age_of: dict[str, int] = {}
    for line in ranked:
        if line in previous_identifiers:
            age_of[line] = PREVIOUS_AGE - previous_identifiers.index(line)
        else:
            token = line[2:]
            if token in stated:
                age_of[line] = stated[token]
    identifier_ages = dict(zip(previous_identifiers, state.ages[sections.IDENTIFIERS.key], strict=True))
    age_of.update((line, identifier_ages[line]) for line in age_of if line in identifier_ages)
    return age_of
