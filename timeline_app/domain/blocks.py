"""Block values and path rules shared by the pure core (seed 000 "Stable Paths")."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

# Block types named by the seeds.
TURN_HEADER = "turn.header"
USER_PROMPT = "user.prompt"
USER_ATTACHMENT = "user.attachment"
USER_ATTACHMENT_META = "user.attachment.meta"
ASSISTANT_COMPLETION = "assistant.completion"
TOOL_CALL = "react.tool.call"
TOOL_RESULT = "react.tool.result"
NOTES = "react.notes"
PLAN = "react.plan"
PLAN_ACK = "react.plan.ack"
SUMMARY = "conv.range.summary"
SOURCES_POOL = "sources.pool"
ANNOUNCE = "announce"
THINKING = "react.thinking"
"""A model's thinking / redacted-thinking block (Anthropic) or reasoning item (OpenAI Responses),
stored so its provider's native format can send it back unchanged (``domain/thinking.py``)."""

TOOL_CALL_ID_IN_PATH = re.compile(r"\b(tc_[A-Za-z0-9_\-]+)")
"""A ``tc_<id>`` in a path: the tool call a block belongs to when its meta does not say."""


@dataclass(frozen=True)
class Block:
    """One stored block as the pure core sees it.

    ``seq`` is the total order inside one timeline. ``data`` is the binary payload as base64
    text (empty for text blocks). ``tokens`` is the estimate computed once at write time.
    """

    seq: int
    type: str
    turn_id: str = ""
    author: str = ""
    ts: str = ""
    mime: str = ""
    text: str = ""
    data: str = ""
    path: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    hidden: bool = False
    replacement_text: str = ""
    hidden_reason: str = ""
    tokens: int = 0
    replacement_tokens: int = 0

    @property
    def effective_tokens(self) -> int:
        """What the block costs in a render: its replacement text's tokens once hidden."""
        return self.replacement_tokens if self.hidden else self.tokens

    @property
    def tool_call_id(self) -> str:
        """The ``tc_<id>`` this block belongs to: ``meta.tool_call_id`` or the one in its path."""
        value = self.meta.get("tool_call_id")
        if isinstance(value, str) and value:
            return value
        match = TOOL_CALL_ID_IN_PATH.search(self.path)
        return match.group(1) if match else ""

    @property
    def is_binary(self) -> bool:
        return bool(self.data)

    def hide(self, *, replacement_text: str, reason: str, replacement_tokens: int) -> Block:
        return self.with_hide_state(
            hidden=True,
            replacement_text=replacement_text,
            hidden_reason=reason,
            replacement_tokens=replacement_tokens,
        )

    @classmethod
    def from_columns(cls, columns: Sequence[Any]) -> Block:
        """A block from its field values in declaration order, all of them, without ``__init__``:
        a render reads tens of thousands of rows, and the frozen ``__init__`` (one
        ``object.__setattr__`` per field) was most of turning a row into a value."""
        if len(columns) != len(_FIELD_NAMES):
            raise TypeError(f"expected {len(_FIELD_NAMES)} columns, got {len(columns)}")
        block = object.__new__(cls)
        block.__dict__.update(zip(_FIELD_NAMES, columns, strict=True))
        return block

    def with_hide_state(self, **changes: Any) -> Block:
        """A copy with other hide fields (``hidden``, ``replacement_text``, ``hidden_reason``,
        ``replacement_tokens``). Unlike ``dataclasses.replace`` it skips ``__init__``: a TTL prune
        hides thousands of blocks per render, and ``replace`` was a third of that render."""
        unknown = set(changes) - _HIDE_FIELDS
        if unknown:
            raise TypeError(f"not a hide field: {sorted(unknown)}")
        copy = object.__new__(Block)
        copy.__dict__.update(self.__dict__, **changes)
        return copy


_FIELD_NAMES = tuple(f.name for f in fields(Block))
_HIDE_FIELDS = frozenset({"hidden", "replacement_text", "hidden_reason", "replacement_tokens"})


def is_turn_start(block: Block) -> bool:
    """Seed 002 (cut-point rule 4): a turn starts at a ``turn.header``, a ``user.prompt`` or any
    block the user authored. The cut points (a split turn's prefix) and the cache points (the
    current turn) read it."""
    return block.type in (TURN_HEADER, USER_PROMPT) or block.author == "user"


def turn_header_path(turn_id: str) -> str:
    return f"ar:{turn_id}.turn.header"


def user_prompt_path(turn_id: str) -> str:
    return f"ar:{turn_id}.user.prompt"


def attachment_path(turn_id: str, name: str) -> str:
    return f"fi:{turn_id}.user.attachments/{name}"


def completion_path(turn_id: str) -> str:
    return f"ar:{turn_id}.assistant.completion"


def notes_path(turn_id: str, tool_call_id: str) -> str:
    return f"ar:{turn_id}.react.notes.{tool_call_id}"


def tool_call_path(turn_id: str, tool_call_id: str) -> str:
    return f"tc:{turn_id}.{tool_call_id}.call"


def tool_result_path(turn_id: str, tool_call_id: str) -> str:
    return f"tc:{turn_id}.{tool_call_id}.result"


def summary_path(turn_id: str) -> str:
    return f"su:{turn_id}.conv.range.summary"


def sources_pool_path(first: int, last: int) -> str:
    return f"so:sources_pool[{first}-{last}]" if first != last else f"so:sources_pool[{first}]"


SOURCES_SELECTOR_PREFIX = "so:sources_pool"
SOURCES_SELECTOR_MAX_TERMS = 100
SEQ_LIMIT = 2**63 - 1
"""The largest ``next_seq`` (a bigint column): a block's seq stays below it, at most 2^63 - 2."""
SID_MAX = 2**31 - 1
_SELECTOR = re.compile(r"^so:sources_pool\[([^\[\]]*)\]$")
_SELECTOR_TERM = re.compile(r"^\s*(\d{1,10})\s*(?:-\s*(\d{1,10})\s*)?$")


class SelectorError(ValueError):
    """A malformed ``so:sources_pool[…]`` selector; ``details`` names the problem."""

    def __init__(self, message: str, details: dict[str, str]):
        super().__init__(message)
        self.details = details


@dataclass(frozen=True)
class SourcesSelector:
    """``so:sources_pool[3,5-6]``: sids and inclusive ranges, comma-separated.

    The selected sources are every source whose sid a term names, in ascending sid order, each
    once (whatever the order of the terms and however they overlap). A single sid names that
    source; a range names the sources of the pool inside it (gaps are fine), so the range path a
    render shows always reads back.
    """

    terms: tuple[tuple[int, int], ...]

    def unknown_terms(self, found_sids: Iterable[int]) -> list[str]:
        """The terms (as ``"6"`` or ``"9-12"``) that name no source among ``found_sids``."""
        found = sorted(set(found_sids))
        unknown: list[str] = []
        for first, last in self.terms:
            at = bisect_left(found, first)
            if at == len(found) or found[at] > last:
                label = str(first) if first == last else f"{first}-{last}"
                if label not in unknown:
                    unknown.append(label)
        return unknown


def parse_sources_selector(path: str) -> SourcesSelector | None:
    """The selector of a ``so:sources_pool[…]`` path; None when ``path`` is no sources path.

    Raises :class:`SelectorError` when the path starts with ``so:sources_pool`` but is not
    ``so:sources_pool[<term>(,<term>)*]`` with ``<term>`` = ``<sid>`` or ``<sid>-<sid>`` (ascending,
    sids below 2^31, at most 100 terms; spaces around terms are allowed).
    """
    rest = path.removeprefix(SOURCES_SELECTOR_PREFIX)
    if rest == path or rest[:1] not in ("", "["):
        return None
    syntax = "so:sources_pool[<sid or first-last>,…], e.g. so:sources_pool[3,5-6]"
    match = _SELECTOR.match(path)
    if match is None:
        raise SelectorError(f"malformed sources selector; expected {syntax}", {"path": syntax})
    raw_terms = match.group(1).split(",")
    if len(raw_terms) > SOURCES_SELECTOR_MAX_TERMS:
        raise SelectorError(
            f"a sources selector has at most {SOURCES_SELECTOR_MAX_TERMS} terms",
            {"path": f"at most {SOURCES_SELECTOR_MAX_TERMS} terms"},
        )
    terms: dict[tuple[int, int], None] = {}
    for raw in raw_terms:
        term = _SELECTOR_TERM.match(raw)
        if term is None:
            raise SelectorError(f"malformed term {raw.strip()!r}; expected {syntax}", {"path": syntax})
        first = int(term.group(1))
        last = int(term.group(2) or first)
        if last > SID_MAX:
            raise SelectorError(f"sid {last} out of range", {"path": f"sids are below 2^31: {raw.strip()}"})
        if first > last:
            raise SelectorError(
                f"descending range {raw.strip()!r}", {"path": f"a range is first-last: {raw.strip()}"}
            )
        terms.setdefault((first, last), None)
    return SourcesSelector(terms=tuple(terms))


PATH_PATTERN = re.compile(r"^(ar|fi|tc|su|so):[^\s]{1,1000}$")


def is_valid_path(path: str) -> bool:
    """A path is ``<kind>:<rest>`` with a seed kind prefix and no whitespace."""
    return bool(PATH_PATTERN.match(path))


def window_summary_seq(window: Sequence[Block]) -> int | None:
    """The seq of the summary a visible window starts with (``[latest summary] + blocks``), or
    ``None`` when it shows none: identifies the compaction state a render was made in."""
    return window[0].seq if window and window[0].type == SUMMARY else None
