"""Block values and path rules shared by the pure core (seed 000 "Stable Paths")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
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

_TOOL_CALL_ID_IN_PATH = re.compile(r"\b(tc_[A-Za-z0-9_\-]+)")


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
        match = _TOOL_CALL_ID_IN_PATH.search(self.path)
        return match.group(1) if match else ""

    @property
    def is_binary(self) -> bool:
        return bool(self.data)

    def hide(self, *, replacement_text: str, reason: str, replacement_tokens: int) -> Block:
        return replace(
            self,
            hidden=True,
            replacement_text=replacement_text,
            hidden_reason=reason,
            replacement_tokens=replacement_tokens,
        )


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


PATH_PATTERN = re.compile(r"^(ar|fi|tc|su|so):[^\s]{1,1000}$")


def is_valid_path(path: str) -> bool:
    """A path is ``<kind>:<rest>`` with a seed kind prefix and no whitespace."""
    return bool(PATH_PATTERN.match(path))
