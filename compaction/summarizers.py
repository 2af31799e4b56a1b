"""Summarizers behind one protocol (pure module: no Django, no ``anthropic``, no I/O).

* :class:`ExtractiveSummarizer`: deterministic, offline and fast — the embedded default and the
  fallback whenever an LLM summarizer fails.
* :class:`compaction.anthropic_summarizer.AnthropicSummarizer` (separate module) calls Claude.

Both are *progressive* (seed 002): they receive the previous summary's text and fold it into the
new one, so a chain of compactions keeps the earliest goals and paths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from compaction import summary_sections as sections
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    PLAN,
    TOOL_CALL,
    TOOL_RESULT,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)
from timeline_app.domain.text import ellipsize, one_line
from timeline_app.domain.tokens import count_text_tokens

Purpose = Literal["history", "split_turn"]


class SummarizerError(Exception):
    """A summarizer could not produce a summary. The message is short and safe to store."""


@runtime_checkable
class Summarizer(Protocol):
    """``name`` and ``model`` are recorded on the compaction row; ``summarize`` returns markdown
    within ``max_tokens`` or raises :class:`SummarizerError`."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def summarize(
        self,
        *,
        blocks: Sequence[Block],
        previous_summary: str | None,
        max_tokens: int,
        purpose: Purpose,
    ) -> str: ...


# --------------------------------------------------------------------------------------------
# Transcript for LLM summarizers


def transcript(blocks: Sequence[Block], *, per_block_chars: int = 2000) -> str:
    """A compact plain-text transcript of ``blocks`` for an LLM: one header line per block
    (seq, type, author, path, tool call id, hidden) and its text trimmed to ``per_block_chars``.
    Hidden blocks show their replacement text; binary payloads are named, not inlined."""
    parts: list[str] = []
    for b in blocks:
        head = [f"[{b.seq}] {b.type}"]
        if b.author:
            head.append(f"author={b.author}")
        if b.turn_id:
            head.append(f"turn={b.turn_id}")
        if b.path:
            head.append(f"path={b.path}")
        tc = b.tool_call_id
        if tc and tc not in b.path:
            head.append(f"tool_call_id={tc}")
        status = b.meta.get("status")
        if isinstance(status, str) and status:
            head.append(f"status={status}")
        if b.hidden:
            head.append("hidden")
            body = b.replacement_text
        elif b.is_binary:
            body = f"(binary {b.mime or 'payload'}){' ' + b.text if b.text else ''}"
        else:
            body = b.text
        parts.append(
            " ".join(head) + ("\n" + ellipsize(body.strip(), per_block_chars) if body.strip() else "")
        )
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------
# Extractive summarizer

# What the summary keeps when it must drop lines (most needed last), see ``_drop_sequence``:
# 1. paths and tool call ids (the digest keeps every one, and search finds them), then progress
#    lines taken from this range's completions and "Critical context";
# 2. identifiers met only inside a tool result's listings (arrays of records), lowest ranked first;
# 3. the older requests;
# 4. the recent working state, oldest first whatever its section: decisions, errors, artifacts,
#    the other identifiers, earlier summaries' progress lines;
# 5. the active plan's pending steps, the latest requests, the constraints and, last of all, the
#    very first request: the conversation's original goal.
_RECENT_REQUESTS = 3
_PREVIOUS_AGE = -(10**9)  # lines of the previous summary are older than any block


def _is_follow_up(goal_line: str) -> bool:
    """A short prompt without an identifier ("ok", "Go on."): it carries no request of its own."""
    text = _LABEL.sub("", goal_line, count=1).removeprefix("- ")
    return len(text.split()) < _MIN_REQUEST_WORDS and not sections.identifiers_in(text)


def _protected_requests(goals: Sequence[str]) -> list[int]:
    """Indices of the requests dropped last: the latest few that are not follow-ups (the first
    request is apart), oldest first."""
    out: list[int] = []
    for i in range(len(goals) - 1, 0, -1):
        if len(out) == _RECENT_REQUESTS:
            break
        if not _is_follow_up(goals[i]):
            out.append(i)
    return out[::-1]


_LINE_CHARS = 600  # one extracted line at most
_SENTENCE_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Words that make a user's sentence a standing instruction or limit rather than a one-off request.
_CONSTRAINT_CUES = re.compile(
    r"\b(always|never|every|only|must|do not|don't|no|keep|budget|avoid|need|prefer|make sure|"
    r"exclude|ignore|at most|at least|instead)\b",
    re.IGNORECASE,
)
# A sentence giving a reason, or the assistant saying what it chose or did.
_REASON_CUES = re.compile(r"\b(because|since|so that|due to|given that)\b|\s[—–]\s", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(I|We)\s")
_DONE = frozenset({"done", "completed", "complete", "skipped", "cancelled", "canceled", "finished"})
_STEP_TEXT_KEYS = ("text", "title", "step", "description", "name", "task")
_ARTIFACT_LINE = re.compile(r"^- `([^`]+)`")
_LABEL = re.compile(r"^- \[[^\]]*\] ")
_MIN_REQUEST_WORDS = 4  # "ok", "Go on.": a follow-up without an identifier is not a request


def _first_sentence(text: str) -> str:
    flat = one_line(text, _LINE_CHARS)
    match = _SENTENCE_END.search(flat)
    return flat[: match.start()] if match else flat


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(one_line(text, 4 * _LINE_CHARS)) if s.strip()]


def constraint_sentences(text: str) -> list[str]:
    """The sentences of a user's text that state a standing instruction or limit, verbatim."""
    return [ellipsize(s, _SENTENCE_CHARS) for s in _sentences(text) if _CONSTRAINT_CUES.search(s)]


def decision_sentences(text: str) -> list[str]:
    """The sentences of an assistant's text that give a reason or say what it chose or did."""
    return [
        ellipsize(s, _SENTENCE_CHARS)
        for s in _sentences(text)
        if _REASON_CUES.search(s) or _FIRST_PERSON.match(s)
    ]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def pending_steps(block: Block) -> list[str] | None:
    """The steps not done of a ``react.plan`` block (JSON ``{"steps": [...]}``, each step a string
    or an object with a text and a ``status``/``done``); None when the block holds no plan."""
    data = _json(_visible_text(block))
    steps = data.get("steps") if isinstance(data, dict) else data if isinstance(data, list) else None
    if not isinstance(steps, list):
        return None
    out: list[str] = []
    for step in steps:
        if isinstance(step, str):
            out.append(one_line(step, _SENTENCE_CHARS))
            continue
        if not isinstance(step, dict):
            continue
        text = next((step[k] for k in _STEP_TEXT_KEYS if isinstance(step.get(k), str)), "")
        status = step.get("status")
        done = step.get("done") is True or (isinstance(status, str) and status.lower() in _DONE)
        if text.strip() and not done:
            out.append(one_line(text, _SENTENCE_CHARS))
    return out


def _file_values(value: Any, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [value] if sections.is_file_name_or_path(value) else []
    if depth >= 2:
        return []
    if isinstance(value, dict):
        return [f for v in value.values() for f in _file_values(v, depth + 1)]
    if isinstance(value, list):
        return [f for v in value[:20] for f in _file_values(v, depth + 1)]
    return []


def artifacts_of(block: Block) -> list[tuple[str, str]]:
    """``(path, action)`` of the files a block touches: an attachment is ``attached``; a tool call
    acts on the file paths among its parameters with its tool id (``fs.write``)."""
    if block.type == USER_ATTACHMENT and block.path:
        return [(block.path, "attached")]
    if block.type != TOOL_CALL:
        return [(block.path, "produced")] if block.path.startswith("fi:") else []
    data = _json(block.text)
    params = data.get("params", data) if isinstance(data, dict) else None
    tool_id = block.meta.get("tool_id") or (data.get("tool_id") if isinstance(data, dict) else "")
    action = tool_id if isinstance(tool_id, str) and tool_id else "tool call"
    return [(path, action) for path in dict.fromkeys(_file_values(params))]


def _salient_texts(block: Block) -> tuple[str, str]:
    """(the text whose identifiers matter, the listing text) of a block: a JSON tool result's
    arrays (records of a listing) are the listing, its other values the answer."""
    text = _visible_text(block)
    if block.type != TOOL_RESULT or block.hidden:
        return text, ""
    data = _json(text)
    if not isinstance(data, dict):
        return text, ""
    answer = {k: v for k, v in data.items() if not isinstance(v, list)}
    listing = {k: v for k, v in data.items() if isinstance(v, list)}
    return json.dumps(answer, ensure_ascii=False), json.dumps(listing, ensure_ascii=False) if listing else ""


def _is_error(block: Block) -> bool:
    if block.meta.get("status") == "error":
        return True
    return block.type == TOOL_RESULT and block.text[:64].lstrip().lower().startswith("error")


def _estimate_tokens(line: str) -> int:
    # About 4 characters per token for English prose; paths and ids are denser, so the rendered
    # result is always verified with the real tokenizer (and the budget tightened when needed).
    return len(line) // 4 + 1


def _visible_text(block: Block) -> str:
    return block.replacement_text if block.hidden else block.text


def identifier_lines(blocks: Sequence[Block], previous: Sequence[str] = ()) -> list[str]:
    """The "Key identifiers" lines: every identifier of the previous lines and of the blocks' texts
    (hidden ones: their replacement text), best ranked first (see
    :func:`compaction.summary_sections.rank_identifiers`; the previous summary counts as the oldest
    text). A previous line is kept verbatim, at the rank of its best identifier."""
    ranked = sections.rank_identifiers(["\n".join(previous), *(_visible_text(b) for b in blocks)])
    line_of: dict[str, str] = {}
    for line in previous:
        for token in sections.identifiers_in(line):
            line_of.setdefault(token, line)
    out: dict[str, None] = {}
    for token in ranked:
        out.setdefault(line_of.get(token, f"- {token}"), None)
    for line in previous:  # lines without a recognisable identifier keep their place at the end
        out.setdefault(line, None)
    return list(out)


@dataclass
class _Lines:
    """Summary lines by section, each with an age (the seq of the block it came from; lines of
    the previous summary are older than any block)."""

    lines: dict[str, list[str]]
    ages: dict[str, list[int]]

    @classmethod
    def from_previous(cls, previous_summary: str | None) -> _Lines:
        lines = sections.parse_sections(previous_summary or "")
        # A section lists its newest line last ("Key identifiers": first). A line's age is the
        # tokens between it and that end, so every section loses its oldest lines at the same rate.
        ages: dict[str, list[int]] = {}
        for key, kept in lines.items():
            newest_first = kept if key == sections.IDENTIFIERS.key else kept[::-1]
            distance, by_line = 0, []
            for line in newest_first:
                by_line.append(_PREVIOUS_AGE - distance)
                distance += _estimate_tokens(line)
            ages[key] = by_line if key == sections.IDENTIFIERS.key else by_line[::-1]
        return cls(lines, ages)

    def add(self, section: sections.Section, line: str, age: int) -> None:
        kept = self.lines[section.key]
        if line in kept:  # met again: it is as recent as its latest mention
            i = kept.index(line)
            self.ages[section.key][i] = max(self.ages[section.key][i], age)
            return
        kept.append(line)
        self.ages[section.key].append(age)

    def replace(self, section: sections.Section, lines: list[str], age: int) -> None:
        self.lines[section.key] = list(lines)
        self.ages[section.key] = [age] * len(lines)


def _artifact_lines(
    previous: list[str], previous_ages: list[int], blocks: Sequence[Block]
) -> tuple[list[str], list[int]]:
    """One line per file, ``- `path` — last action``, oldest first; a file met again moves down."""
    entries: dict[str, tuple[str, int]] = {}
    for line, age in zip(previous, previous_ages, strict=True):
        match = _ARTIFACT_LINE.match(line)
        entries[match.group(1) if match else line] = (line, age)
    for b in blocks:
        for path, action in artifacts_of(b):
            entries.pop(path, None)
            where = f" ({b.path})" if b.path and b.path != path else ""
            entries[path] = (f"- `{path}` — {action}{where}", b.seq)
    ordered = sorted(entries.values(), key=lambda e: e[1])
    return [line for line, _ in ordered], [age for _, age in ordered]


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """Deterministic extractive summary in the sections of :mod:`compaction.summary_sections`:
    the previous summary's lines first (per section, whichever summarizer wrote it), user requests
    verbatim (whitespace collapsed, at most 600 characters each; short follow-ups left out), the
    user's standing instructions verbatim (sentences with a cue such as always, never, only, must,
    budget), the active plan's pending steps, decisions (the assistant's sentences that give a
    reason or say what it chose), errors, artifacts (files attached or passed to a tool, with the
    last action on each), the key identifiers of the compacted texts (those the conversation
    states before those only listed inside a tool result), and every path and tool call id —
    within ``max_tokens``, dropping the least needed lines first (see ``_drop_sequence``) and
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
        state = _Lines.from_previous(previous_summary)
        lines = state.lines
        previous_identifiers = list(lines[sections.IDENTIFIERS.key])
        previous_progress = len(lines[sections.PROGRESS.key])
        stated: dict[str, int] = {}  # identifier -> the latest seq a text that matters states it
        listed: list[str] = []  # texts of tool-result listings

        for b in blocks:
            label = f"[{b.turn_id}] " if b.turn_id else ""
            text = _visible_text(b)
            if b.type == USER_PROMPT or b.author == "user":
                if text.strip():
                    state.add(sections.GOALS, f"- {label}{one_line(text, _LINE_CHARS)}", b.seq)
                if b.type == USER_PROMPT:
                    for sentence in constraint_sentences(text):
                        state.add(sections.CONSTRAINTS, f"- {sentence}", b.seq)
            elif b.type == ASSISTANT_COMPLETION and text.strip():
                chosen = decision_sentences(text)
                for sentence in chosen:
                    state.add(sections.DECISIONS, f"- {label}{sentence}", b.seq)
                if not chosen:
                    state.add(sections.PROGRESS, f"- {label}{_first_sentence(text)}", b.seq)
            elif b.type == PLAN:
                steps = pending_steps(b)
                if steps is not None:
                    head = [f"- plan `{b.path}`, pending:"] if b.path and steps else []
                    state.replace(sections.NEXT_STEPS, [*head, *(f"- [ ] {step}" for step in steps)], b.seq)
            if _is_error(b):
                where = b.path or b.type
                detail = one_line(text, 120) if text.strip() else "error"
                state.add(sections.ERRORS, f"- `{where}`: {detail}", b.seq)
            salient, listing = _salient_texts(b)
            for token in sections.identifiers_in(salient):
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
        lines[key], state.ages[key] = _artifact_lines(lines[key], state.ages[key], blocks)

        # An identifier that a request kept longer than the identifiers quotes is there already.
        goals = lines[sections.GOALS.key]
        protected = [goals[i] for i in (0, *_protected_requests(goals)) if i < len(goals)]
        quoted = {f"- {token}" for token in sections.identifiers_in("\n".join(protected))}
        ranked = [
            line
            for line in identifier_lines(blocks, previous_identifiers)
            if line in previous_identifiers or line not in quoted
        ]
        # The identifiers of an older request (it may be dropped) are listed from now on.
        goal_ages = state.ages[sections.GOALS.key]
        protected_at = {0, *_protected_requests(goals)}
        for i, goal in enumerate(goals):
            if i in protected_at:
                continue
            for token in sections.identifiers_in(_LABEL.sub("", goal, count=1)):
                stated[token] = max(stated.get(token, goal_ages[i]), goal_ages[i])
                if f"- {token}" not in ranked and not any(token in line for line in previous_identifiers):
                    ranked.append(f"- {token}")
        # Stated identifiers (and the previous summary's) first, newest first; listed-only last.
        age_of: dict[str, int] = {}
        for line in ranked:
            if line in previous_identifiers:
                age_of[line] = _PREVIOUS_AGE - previous_identifiers.index(line)
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
        order = _drop_sequence(state, stated_identifiers=len(first), previous_progress=previous_progress)
        if purpose == "split_turn":
            return _fit("", lines, max_tokens, order, level=3)
        return _fit(sections.SUMMARY_TITLE, lines, max_tokens, order)


def _drop_sequence(
    state: _Lines, *, stated_identifiers: int, previous_progress: int
) -> list[tuple[str, int]]:
    """Lines in the order they are dropped (see the comment above ``_RECENT_REQUESTS``)."""
    lines, ages = state.lines, state.ages

    def oldest_first(section: sections.Section, indices: range | None = None) -> list[tuple[str, int]]:
        span = range(len(lines[section.key])) if indices is None else indices
        return sorted(((section.key, i) for i in span), key=lambda pair: ages[pair[0]][pair[1]])

    goals = sections.GOALS.key
    progress = sections.PROGRESS
    identifiers = sections.IDENTIFIERS.key
    recent = _protected_requests(lines[goals])
    order = oldest_first(sections.PATHS)
    order += oldest_first(progress, range(previous_progress, len(lines[progress.key])))
    order += oldest_first(sections.CRITICAL)
    order += [(identifiers, i) for i in range(len(lines[identifiers]) - 1, stated_identifiers - 1, -1)]
    order += [(goals, i) for i in range(1, len(lines[goals])) if i not in recent]
    pool = [
        *oldest_first(sections.DECISIONS),
        *oldest_first(sections.ERRORS),
        *oldest_first(sections.ARTIFACTS),
        *[(identifiers, i) for i in range(stated_identifiers)],
        *oldest_first(progress, range(previous_progress)),
    ]
    order += sorted(pool, key=lambda pair: ages[pair[0]][pair[1]])
    order += [(sections.NEXT_STEPS.key, i) for i in range(len(lines[sections.NEXT_STEPS.key]) - 1, -1, -1)]
    order += [(goals, i) for i in recent]
    order += [(sections.CONSTRAINTS.key, i) for i in range(len(lines[sections.CONSTRAINTS.key]) - 1, -1, -1)]
    if lines[goals]:
        order.append((goals, 0))
    return order


def _fit(
    title: str, lines: dict[str, list[str]], max_tokens: int, order: list[tuple[str, int]], *, level: int = 2
) -> str:
    """Drop lines (in ``order``, least needed first) until the rendered text fits ``max_tokens``."""
    kept = {key: [True] * len(section) for key, section in lines.items()}
    costs = {key: [_estimate_tokens(line) + 1 for line in section] for key, section in lines.items()}
    estimate = _estimate_tokens(title) + sum(sum(c) + 4 for c in costs.values() if c)

    def render() -> str:
        chosen = {
            key: [line for line, keep in zip(lines[key], kept[key], strict=True) if keep] for key in lines
        }
        return sections.render_sections(title, chosen, level=level)

    pos = 0
    budget = float(max_tokens)
    for _attempt in range(8):
        while pos < len(order) and estimate > budget:
            key, i = order[pos]
            kept[key][i] = False
            estimate -= costs[key][i]
            pos += 1
        text = render()
        actual = count_text_tokens(text)
        if actual <= max_tokens:
            return text
        if pos >= len(order):
            break
        # The estimate was optimistic for this text (dense paths and ids): tighten the budget.
        budget = min(budget, estimate) * max_tokens / actual * 0.95
    return truncate_to_tokens(render(), max_tokens)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` (by characters, then binary search) within ``max_tokens``."""
    if count_text_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, min(len(text), max(1, max_tokens) * 8)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_text_tokens(text[:mid] + "…") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "…" if lo else ""


# --------------------------------------------------------------------------------------------
# Fallback

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|(?i:x-api-key|api[_-]?key|authorization)\s*[:=]\s*\S+)")


def redact(message: str, *, limit: int = 300) -> str:
    """A short, storable error message with anything that looks like a credential removed."""
    return ellipsize(_SECRET.sub("[redacted]", message), limit)


@dataclass(frozen=True)
class SummaryOutcome:
    text: str
    summarizer: str
    model: str
    error: str | None = None
    # The provider's usage object of the call that wrote the summary (LLM summarizers that
    # expose ``last_usage``), and whether it read the context's cached prefix.
    usage: dict[str, Any] | None = None
    cache: str = ""


def summarize_with_fallback(
    primary: Summarizer | None, fallback: Summarizer, **kwargs: Any
) -> SummaryOutcome:
    """Summarize with ``primary``; on any failure use ``fallback`` and keep a safe error message.

    ``kwargs`` are :meth:`Summarizer.summarize`'s keyword arguments.
    """
    error: str | None = None
    if primary is not None:
        try:
            text = primary.summarize(**kwargs)
        except SummarizerError as exc:
            error = redact(str(exc) or type(exc).__name__)
        except Exception as exc:  # any bug or transport failure: degrade, do not fail the render
            error = redact(f"{type(exc).__name__}: {exc}")
        else:
            if text.strip():
                return SummaryOutcome(
                    text=text,
                    summarizer=primary.name,
                    model=primary.model,
                    usage=getattr(primary, "last_usage", None),
                    cache=getattr(primary, "last_cache", ""),
                )
            error = "empty summary"
    text = fallback.summarize(**kwargs)
    return SummaryOutcome(text=text, summarizer=fallback.name, model=fallback.model, error=error)
