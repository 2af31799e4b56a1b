"""Summarizers behind one protocol (pure module: no Django, no ``anthropic``, no I/O).

* :class:`ExtractiveSummarizer`: deterministic, offline and fast — the embedded default and the
  fallback whenever an LLM summarizer fails.
* :class:`compaction.anthropic_summarizer.AnthropicSummarizer` (separate module) calls Claude.

Both are *progressive* (seed 002): they receive the previous summary's text and fold it into the
new one, so a chain of compactions keeps the earliest goals and paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from compaction import summary_sections as sections
from timeline_app.rendering.blocks import (
    ASSISTANT_COMPLETION,
    TOOL_RESULT,
    USER_PROMPT,
    Block,
)
from timeline_app.rendering.text import ellipsize, one_line
from timeline_app.rendering.tokens import count_text_tokens

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

# When over budget, lines are dropped in this order (oldest line first within a section): paths
# (the digest keeps every one, and search finds them), decisions, errors, the older requests, then
# the sections an LLM summary carries (critical context, progress, next steps, constraints), then
# the key identifiers (the lowest-ranked first), then the latest requests and, last of all, the
# very first request: the conversation's original goal.
_RECENT_REQUESTS = 3
_EARLY_DROPS = (sections.PATHS, sections.DECISIONS, sections.ERRORS)
_LATE_DROPS = (sections.CRITICAL, sections.PROGRESS, sections.NEXT_STEPS, sections.CONSTRAINTS)


def _protected_requests(count: int) -> range:
    """Indices of the requests dropped after the identifiers: the latest few (the first is apart)."""
    return range(max(1, count - _RECENT_REQUESTS), count)


_LINE_CHARS = 600  # one extracted line at most
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _first_sentence(text: str) -> str:
    flat = one_line(text, _LINE_CHARS)
    match = _SENTENCE_END.search(flat)
    return flat[: match.start()] if match else flat


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


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """Deterministic extractive summary in the sections of :mod:`compaction.summary_sections`:
    the previous summary's lines first (per section, whichever summarizer wrote it), user requests
    verbatim (whitespace collapsed, at most 600 characters each), decisions (first sentence of each
    assistant completion), errors, the key identifiers of every compacted text, and every path and
    tool call id — within ``max_tokens``, dropping the least important lines first (see
    ``_drop_sequence``) and truncating last. A split turn's prefix summary has no title and ``###``
    headings: it goes under the history's "Turn Context (split turn)" heading.

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
        lines = sections.parse_sections(previous_summary or "")
        previous_identifiers = lines[sections.IDENTIFIERS.key]
        seen: dict[str, set[str]] = {key: set(kept) for key, kept in lines.items()}

        def add(section: sections.Section, line: str) -> None:
            if line not in seen[section.key]:
                seen[section.key].add(line)
                lines[section.key].append(line)

        for b in blocks:
            label = f"[{b.turn_id}] " if b.turn_id else ""
            text = _visible_text(b)
            if b.type == USER_PROMPT or b.author == "user":
                if text.strip():
                    add(sections.GOALS, f"- {label}{one_line(text, _LINE_CHARS)}")
            elif b.type == ASSISTANT_COMPLETION and text.strip():
                add(sections.DECISIONS, f"- {label}{_first_sentence(text)}")
            if _is_error(b):
                where = b.path or b.type
                detail = one_line(text, 200) if text.strip() else "error"
                add(sections.ERRORS, f"- `{where}`: {detail}")
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
                add(sections.PATHS, f"- `{b.path}`" + (f" ({', '.join(extra)})" if extra else ""))
            elif tc:
                add(sections.PATHS, f"- tool_call_id `{tc}` ({b.type})")
        # An identifier that a request kept longer than the identifiers quotes is there already.
        goals = lines[sections.GOALS.key]
        protected = [goals[i] for i in (0, *_protected_requests(len(goals))) if i < len(goals)]
        quoted = {f"- {token}" for token in sections.identifiers_in("\n".join(protected))}
        lines[sections.IDENTIFIERS.key] = [
            line
            for line in identifier_lines(blocks, previous_identifiers)
            if line in previous_identifiers or line not in quoted
        ]

        if purpose == "split_turn":
            return _fit("", lines, max_tokens, level=3)
        return _fit(sections.SUMMARY_TITLE, lines, max_tokens)


def _drop_sequence(lines: dict[str, list[str]]) -> list[tuple[str, int]]:
    """Lines in the order they are dropped (see ``_RECENT_REQUESTS`` and the drop tuples)."""

    def oldest_first(section: sections.Section) -> list[tuple[str, int]]:
        return [(section.key, i) for i in range(len(lines[section.key]))]

    goals = sections.GOALS.key
    recent = _protected_requests(len(lines[goals]))
    order = [pair for section in _EARLY_DROPS for pair in oldest_first(section)]
    order.extend((goals, i) for i in range(1, recent.start))
    order.extend(pair for section in _LATE_DROPS for pair in oldest_first(section))
    identifiers = sections.IDENTIFIERS.key
    order.extend((identifiers, i) for i in range(len(lines[identifiers]) - 1, -1, -1))
    order.extend((goals, i) for i in recent)
    if lines[goals]:
        order.append((goals, 0))
    return order


def _fit(title: str, lines: dict[str, list[str]], max_tokens: int, *, level: int = 2) -> str:
    """Drop lines (least important first) until the rendered text fits ``max_tokens``."""
    kept = {key: [True] * len(section) for key, section in lines.items()}
    costs = {key: [_estimate_tokens(line) + 1 for line in section] for key, section in lines.items()}
    estimate = _estimate_tokens(title) + sum(sum(c) + 4 for c in costs.values() if c)
    order = _drop_sequence(lines)

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
