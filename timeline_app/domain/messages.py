"""OpenAI-format messages (seed 004) as blocks: strict validation, the message <-> block
mapping and the stored form. Pure: limits and the current time come in as arguments.

A named context is a timeline; each message is stored as one block:

=========== ===================== ========= ==========================================
role        block type            author    notes
=========== ===================== ========= ==========================================
user        ``message.user``      user      a cut point and a turn start
assistant   ``message.assistant`` assistant a cut point (with ``tool_calls`` too)
tool        ``react.tool.result`` tool      never a cut point: never the first retained
system      ``message.system``    system    not a cut point
=========== ===================== ========= ==========================================

``meta.openai_message`` holds the message exactly as given (without ``timestamp`` and
``message_id``), ``meta.message_id`` and ``meta.timestamp`` the added fields, ``meta.tool_call_id``
the call a tool message answers (an assistant message: its first call, which groups the call
and its results into one cache round) and ``meta.tool_call_ids`` all calls of an assistant
message. The block's client id is ``msg:<message_id>``, so sending a message again stores
nothing new. Blocks carry no turn id: TTL pruning never hides a message (a hidden message
would break the OpenAI rendering of a tool pair).

A pop (``POST …/messages/pop/``) takes the newest message of the view out of it: its block is
hidden with the reason :data:`POPPED_REASON`, which leaves it stored (readable by path, counted in
``stored_message_count``) but out of the messages view, the render and compaction. Nothing else
is written, so the other messages keep their ids, timestamps and places.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock

MESSAGE_TYPES: dict[str, str] = {
    "user": "message.user",
    "assistant": "message.assistant",
    "system": "message.system",
    "tool": b.TOOL_RESULT,
}
MESSAGE_BLOCK_TYPES = frozenset(MESSAGE_TYPES.values())
CLIENT_ID_PREFIX = "msg:"
POPPED_REASON = "popped"
"""``hidden_reason`` of a popped message's block: out of every view, still stored."""
MESSAGE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,119}$")
ADDED_FIELDS = ("timestamp", "message_id")
MAX_NAME_CHARS = 256
MAX_ID_CHARS = 512


@dataclass(frozen=True)
class NewMessage:
    """A validated message: the OpenAI message as given, and its id and time."""

    message: dict[str, Any]
    message_id: str
    timestamp: str


# ---------------------------------------------------------------- messages as blocks


def _part_text(part: Mapping[str, Any]) -> str:
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "refusal":
        return f"[refusal] {part.get('refusal', '')}"
    if kind == "image_url":
        url = str(part.get("image_url", {}).get("url", ""))
        shown = url if not url.startswith("data:") else f"{url.split(',', 1)[0]}, {len(url)} chars"
        return f"[image: {shown}]"
    if kind == "input_audio":
        audio = part.get("input_audio", {})
        return f"[audio: {audio.get('format', '')}, {len(str(audio.get('data', '')))} chars]"
    if kind == "file":
        file = part.get("file", {})
        return f"[file: {file.get('filename') or file.get('file_id') or 'inline'}]"
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    """The block text of a message, as the anthropic and text formats show it."""
    lines: list[str] = []
    if message.get("role") == "tool":
        name = message.get("name")
        lines.append(f"[tool result {message.get('tool_call_id')}]" + (f" {name}" if name else ""))
    content = message.get("content")
    if isinstance(content, str) and content:
        lines.append(content)
    elif isinstance(content, list):
        lines.extend(_part_text(p) for p in content if isinstance(p, Mapping))
    if isinstance(message.get("refusal"), str):
        lines.append(f"[refusal] {message['refusal']}")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        lines.append(f"[tool call {call.get('id')}] {function.get('name')}({function.get('arguments')})")
    return "\n".join(lines)


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    return [c["id"] for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]


def message_block(new: NewMessage) -> NewBlock:
    role = new.message["role"]
    meta: dict[str, Any] = {
        "openai_message": new.message,
        "message_id": new.message_id,
        "timestamp": new.timestamp,
        "role": role,
    }
    if role == "tool":
        meta["tool_call_id"] = new.message["tool_call_id"]
    calls = _call_ids(new.message)
    if calls:
        meta["tool_call_id"] = calls[0]
        meta["tool_call_ids"] = calls
    return NewBlock(
        type=MESSAGE_TYPES[role],
        author=role,
        turn_id="",
        ts=new.timestamp,
        mime="text/plain",
        text=message_text(new.message),
        path=f"ar:msg.{new.message_id}",
        meta=meta,
        client_id=CLIENT_ID_PREFIX + new.message_id,
    )


@dataclass(frozen=True)
class StoredMessage:
    message: dict[str, Any]
    message_id: str
    timestamp: str
    seq: int

    def as_dict(self) -> dict[str, Any]:
        """The message as given, plus ``timestamp`` and ``message_id``."""
        return {**self.message, "timestamp": self.timestamp, "message_id": self.message_id}


def stored_message(seq: int, meta: Any) -> StoredMessage | None:
    if not isinstance(meta, dict):
        return None
    message, message_id, timestamp = meta.get("openai_message"), meta.get("message_id"), meta.get("timestamp")
    if not isinstance(message, dict) or not isinstance(message_id, str) or not isinstance(timestamp, str):
        return None
    return StoredMessage(message=message, message_id=message_id, timestamp=timestamp, seq=seq)


def _letters(n: int) -> str:
    """Bijective base 26: 1 → a, 26 → z, 27 → aa."""
    out = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def next_context_name(label: str, existing: Iterable[str]) -> str:
    """The first of ``label_a`` … ``label_z``, ``label_aa`` … not taken yet."""
    taken = set(existing)
    n = 1
    while f"{label}_{_letters(n)}" in taken:
        n += 1
    return f"{label}_{_letters(n)}"
