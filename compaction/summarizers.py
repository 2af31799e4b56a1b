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

GOALS = "## Goals / requests"
DECISIONS = "## Decisions"
ERRORS = "## Errors"
PATHS = "## Paths and tool calls"
EARLIER = "## Earlier context"
SECTIONS = (EARLIER, GOALS, DECISIONS, ERRORS, PATHS)
# Dropped first → dropped last when over budget (oldest line first within a section).
_DROP_ORDER = (DECISIONS, EARLIER, PATHS, ERRORS, GOALS)
_KNOWN_HEADINGS = {h.lower(): h for h in (GOALS, DECISIONS, ERRORS, PATHS, EARLIER)}

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


def _parse_previous(previous: str) -> dict[str, list[str]]:
    """Lines of a previous summary by section; unknown sections become earlier context."""
    out: dict[str, list[str]] = {s: [] for s in SECTIONS}
    current = EARLIER
    for raw in previous.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("## "):
            known = _KNOWN_HEADINGS.get(line.strip().lower())
            if known is not None:
                current = known
                continue
            current = EARLIER
            out[EARLIER].append("### " + line[3:].strip())
            continue
        if line.startswith("# "):  # a top-level title
            continue
        out[current].append(line)
    return out


@dataclass(frozen=True)
class ExtractiveSummarizer:
    """Deterministic extractive summary: the previous summary's lines first (per section), user
    requests verbatim (whitespace collapsed, at most 600 characters each), decisions (first
    sentence of each assistant completion), errors, and every path and tool call id — within
    ``max_tokens``, dropping the least important lines first (decisions, earlier context, paths,
    errors, then requests; oldest first, the very first request last) and truncating last.

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
        sections = _parse_previous(previous_summary) if previous_summary else {s: [] for s in SECTIONS}
        seen: dict[str, set[str]] = {s: set(lines) for s, lines in sections.items()}

        def add(section: str, line: str) -> None:
            if line not in seen[section]:
                seen[section].add(line)
                sections[section].append(line)

        for b in blocks:
            label = f"[{b.turn_id}] " if b.turn_id else ""
            text = b.replacement_text if b.hidden else b.text
            if b.type == USER_PROMPT or b.author == "user":
                if text.strip():
                    add(GOALS, f"- {label}{one_line(text, _LINE_CHARS)}")
            elif b.type == ASSISTANT_COMPLETION and text.strip():
                add(DECISIONS, f"- {label}{_first_sentence(text)}")
            if _is_error(b):
                where = b.path or b.type
                detail = one_line(text, 200) if text.strip() else "error"
                add(ERRORS, f"- `{where}`: {detail}")
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
                add(PATHS, f"- `{b.path}`" + (f" ({', '.join(extra)})" if extra else ""))
            elif tc:
                add(PATHS, f"- tool_call_id `{tc}` ({b.type})")

        title = "# Turn context (split turn)" if purpose == "split_turn" else "# Conversation summary"
        return _fit(title, sections, max_tokens)


def _render(title: str, sections: dict[str, list[str]], kept: dict[str, list[bool]]) -> str:
    out = [title]
    for s in SECTIONS:
        lines = [line for line, keep in zip(sections[s], kept[s], strict=True) if keep]
        if lines:
            out.append("")
            out.append(s)
            out.extend(lines)
    if len(out) == 1:
        out.extend(["", "(nothing to summarize)"])
    return "\n".join(out)


def _drop_sequence(sections: dict[str, list[str]]) -> list[tuple[str, int]]:
    """Lines in the order they are dropped: by section (``_DROP_ORDER``), oldest line first —
    except the very first request, the conversation's original goal, which goes last of all."""
    order: list[tuple[str, int]] = []
    for s in _DROP_ORDER:
        n = len(sections[s])
        order.extend((s, i) for i in range(1 if s == GOALS else 0, n))
    if sections[GOALS]:
        order.append((GOALS, 0))
    return order


def _fit(title: str, sections: dict[str, list[str]], max_tokens: int) -> str:
    """Drop lines (least important first) until the rendered text fits ``max_tokens``."""
    kept = {s: [True] * len(lines) for s, lines in sections.items()}
    costs = {s: [_estimate_tokens(line) + 1 for line in lines] for s, lines in sections.items()}
    estimate = _estimate_tokens(title) + sum(sum(c) + 4 for c in costs.values() if c)
    order = _drop_sequence(sections)
    pos = 0
    budget = float(max_tokens)
    for _attempt in range(8):
        while pos < len(order) and estimate > budget:
            s, i = order[pos]
            kept[s][i] = False
            estimate -= costs[s][i]
            pos += 1
        text = _render(title, sections, kept)
        actual = count_text_tokens(text)
        if actual <= max_tokens:
            return text
        if pos >= len(order):
            break
        # The estimate was optimistic for this text (dense paths and ids): tighten the budget.
        budget = min(budget, estimate) * max_tokens / actual * 0.95
    return truncate_to_tokens(_render(title, sections, kept), max_tokens)


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
                return SummaryOutcome(text=text, summarizer=primary.name, model=primary.model)
            error = "empty summary"
    text = fallback.summarize(**kwargs)
    return SummaryOutcome(text=text, summarizer=fallback.name, model=fallback.model, error=error)
