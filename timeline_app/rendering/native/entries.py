"""The provider-neutral conversation (pure): its messages and their entries (texts, media, tool
calls and results), built by ``conversation.build_conversation`` and read by each native format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "system"]


@dataclass(frozen=True)
class Text:
    text: str
    origin: int = -1


@dataclass(frozen=True)
class Media:
    """An image or a document: base64 ``data`` of ``mime``, or an http(s) ``url`` (images)."""

    kind: Literal["image", "document"]
    mime: str
    data: str = ""
    url: str = ""
    filename: str = ""
    placeholder: str = ""
    origin: int = -1


Content = Text | Media


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]
    arguments: str
    origin: int = -1


@dataclass(frozen=True)
class ToolResult:
    id: str
    content: tuple[Content, ...]
    is_error: bool
    origins: tuple[int, ...] = ()
    synthetic: bool = False


@dataclass(frozen=True)
class Thinking:
    """A thinking block or reasoning item (``react.thinking``), as its provider's own ``native``
    dict: only the format of that provider renders it (``domain/thinking.py``)."""

    provider: str
    native: dict[str, Any]
    origin: int = -1


Entry = Text | Media | ToolUse | ToolResult | Thinking


@dataclass
class Message:
    role: Role
    content: list[Entry] = field(default_factory=list)


@dataclass
class Conversation:
    messages: list[Message]
    # For each stable block index, where its last content landed: (message, entry) or None.
    positions: dict[int, tuple[int, int]]
