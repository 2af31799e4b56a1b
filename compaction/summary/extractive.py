"""The extractive summarizer (pure): deterministic, offline and fast — the embedded default and the
fallback whenever an LLM summarizer fails. It is *progressive* (seed 002): it folds the previous
summary's lines into the new one, so a chain of compactions keeps the earliest goals and paths."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compaction.summary import sections
from compaction.summary.base import Purpose
from compaction.summary.budget import (
    PREVIOUS_AGE,
    Lines,
    artifact_lines,
    drop_sequence,
    fit,
    is_acknowledgement,
    protected_requests,
)
from compaction.summary.extract import (
    LABEL,
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
from timeline_app.domain.blocks import ASSISTANT_COMPLETION, PLAN, USER_ATTACHMENT, USER_PROMPT, Block
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
        state = Lines.from_previous(previous_summary)
        lines = state.lines
        previous_identifiers = list(lines[sections.IDENTIFIERS.key])
        previous_progress = len(lines[sections.PROGRESS.key])
        stated: dict[str, int] = {}  # identifier -> the latest seq a text that matters states it
        listed: list[str] = []  # texts of tool-result listings
        found_by_block: list[list[str]] = []  # the identifiers of each block's visible text

        for b in blocks:
            label = f"[{b.turn_id}] " if b.turn_id else ""
            text = visible_text(b)
            if b.type == USER_ATTACHMENT:
                pass  # a file, not a request: "Artifacts" names it, its text is read back by path
            elif (b.type == USER_PROMPT or b.author == "user") and is_acknowledgement(text):
                pass  # "ok", "Thanks, keep going.": no request, no instruction
            elif b.type == USER_PROMPT or b.author == "user":
                if text.strip():
                    state.add(sections.GOALS, f"- {label}{one_line(text, LINE_CHARS)}", b.seq)
                if b.type == USER_PROMPT:
                    for sentence in constraint_sentences(text):
                        state.add(sections.CONSTRAINTS, f"- {sentence}", b.seq)
            elif b.type == ASSISTANT_COMPLETION and text.strip():
                chosen = decision_sentences(text)
                for sentence in chosen:
                    state.add(sections.DECISIONS, f"- {label}{sentence}", b.seq)
                if not chosen:
                    state.add(sections.PROGRESS, f"- {label}{first_sentence(text)}", b.seq)
            elif b.type == PLAN:
                steps = pending_steps(b)
                if steps is not None:
                    head = [f"- plan `{b.path}`, pending:"] if b.path and steps else []
                    state.replace(sections.NEXT_STEPS, [*head, *(f"- [ ] {step}" for step in steps)], b.seq)
            error = error_of(b)
            if error is not None:
                state.add(sections.ERRORS, f"- `{b.path or b.type}`: {error}", b.seq)
            found = sections.identifiers_in(text)
            found_by_block.append(found)
            salient, listing = salient_texts(b)
            for token in found if salient is text else sections.identifiers_in(salient):
                stated[token] = b.seq
            if listing:
                listed.append(listing)
            tc = b.tool_call_id
            if b.path:
                extra: list[str] = []
                if tc and tc not in b.path:
                    extra.append(f"tool_call_id {tc}")
                tool_id = b.meta.get("tool_id")
                if isinstance(tool_id, str) and tool_id:
                    extra.append(f"tool {tool_id}")
                if b.hidden:
                    extra.append("hidden")
                state.add(
                    sections.PATHS, f"- `{b.path}`" + (f" ({', '.join(extra)})" if extra else ""), b.seq
                )
            elif tc:
                state.add(sections.PATHS, f"- tool_call_id `{tc}` ({b.type})", b.seq)
        key = sections.ARTIFACTS.key
        lines[key], state.ages[key] = artifact_lines(lines[key], state.ages[key], blocks)

        # An identifier that a request kept longer than the identifiers quotes is there already.
        goals = lines[sections.GOALS.key]
        protected = [goals[i] for i in (0, *protected_requests(goals)) if i < len(goals)]
        quoted = {f"- {token}" for token in sections.identifiers_in("\n".join(protected))}
        ranked = [
            line
            for line in identifier_lines(blocks, previous_identifiers, found_by_block)
            if line in previous_identifiers or line not in quoted
        ]
        # The identifiers of an older request (it may be dropped) are listed from now on.
        goal_ages = state.ages[sections.GOALS.key]
        protected_at = {0, *protected_requests(goals)}
        for i, goal in enumerate(goals):
            if i in protected_at:
                continue
            for token in sections.identifiers_in(LABEL.sub("", goal, count=1)):
                stated[token] = max(stated.get(token, goal_ages[i]), goal_ages[i])
                if f"- {token}" not in ranked and not any(token in line for line in previous_identifiers):
                    ranked.append(f"- {token}")
        # Stated identifiers (and the previous summary's) first, newest first; listed-only last.
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
        first = [line for line in ranked if line in age_of]
        first.sort(key=lambda line: -age_of[line])
        rest = [line for line in ranked if line not in age_of]
        lines[sections.IDENTIFIERS.key] = first + rest
        state.ages[sections.IDENTIFIERS.key] = [age_of[line] for line in first] + [0] * len(rest)
        order = drop_sequence(
            state, stated_identifiers=len(first), previous_progress=previous_progress, max_tokens=max_tokens
        )
        if purpose == "split_turn":
            return fit("", lines, max_tokens, order, level=3)
        return fit(sections.SUMMARY_TITLE, lines, max_tokens, order)
