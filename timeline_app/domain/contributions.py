"""What a client contributes, before it is stored: new blocks and attachments, the seed's default
paths of well-known block types (seed 000 "Stable Paths"), and one tool round as blocks."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from timeline_app.domain import blocks as b


@dataclass
class NewBlock:
    """A block as a client contributes it (validated by the API layer or built by a service)."""

    type: str
    author: str = ""
    turn_id: str | None = None
    ts: str | None = None
    mime: str = ""
    text: str = ""
    data: bytes = b""
    path: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    client_id: str | None = None


REPLAY_FIELDS = ("type", "author", "turn_id", "ts", "mime", "text", "data", "path", "meta")
"""What a client sends of a block, in the order a conflict names them (``replay_differences``)."""


def replay_differences(*, stored: NewBlock, sent: NewBlock) -> list[str]:
    """The fields of ``sent`` that differ from the block ``stored`` under the same client id.

    The body the client sent is compared, not what the server filled in: an omitted ``turn_id``
    (the current turn), ``ts`` (the time of the write) or ``path`` (the seed path) is whatever was
    stored, so a replay that omits them again matches; sent explicitly, each must equal the stored
    value. Every other field has a fixed default (an omitted ``text`` is ``""``), so it is compared
    as the serializer gave it. Empty: the same block (a replay).
    """
    omitted = {
        "turn_id": sent.turn_id is None,
        "ts": sent.ts is None,
        "path": not sent.path,
    }
    return [
        name
        for name in REPLAY_FIELDS
        if not omitted.get(name, False) and getattr(stored, name) != getattr(sent, name)
    ]


def default_path(*, type: str, turn_id: str, meta: dict[str, Any]) -> str:
    """The seed path of a well-known block type (seed 000 "Stable Paths"); empty when none applies."""
    tool_call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else ""
    if not turn_id:
        return ""
    if type == b.USER_PROMPT:
        return b.user_prompt_path(turn_id)
    if type == b.ASSISTANT_COMPLETION:
        return b.completion_path(turn_id)
    if type == b.USER_ATTACHMENT and isinstance(meta.get("name"), str) and meta["name"]:
        return b.attachment_path(turn_id, meta["name"])
    if tool_call_id:
        if type == b.TOOL_CALL:
            return b.tool_call_path(turn_id, tool_call_id)
        if type == b.TOOL_RESULT:
            return b.tool_result_path(turn_id, tool_call_id)
        if type == b.NOTES:
            return b.notes_path(turn_id, tool_call_id)
    return ""


@dataclass
class NewAttachment:
    name: str
    mime: str
    data: bytes = b""
    text: str = ""
    summary: str = ""


def tool_call_blocks(
    *,
    turn_id: str,
    tool_call_id: str,
    tool_id: str,
    params: Any,
    result: Any,
    note: str | None = None,
    status: str = "ok",
    result_mime: str = "application/json",
) -> list[NewBlock]:
    """One tool round as blocks: an optional ``react.notes``, the ``react.tool.call`` and its
    ``react.tool.result`` (seed 000 "Visible Timeline"), all carrying the same ``tool_call_id``.

    ``result`` is stored as given when it is text, as JSON otherwise.
    """
    meta = {"tool_call_id": tool_call_id, "tool_id": tool_id}
    call_text = json.dumps(
        {"tool_id": tool_id, "tool_call_id": tool_call_id, "params": params}, ensure_ascii=False
    )
    result_text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    rows = (
        []
        if note is None
        else [NewBlock(type=b.NOTES, author="react", turn_id=turn_id, text=note, meta=dict(meta))]
    )
    return [
        *rows,
        NewBlock(
            type=b.TOOL_CALL,
            author="react",
            turn_id=turn_id,
            mime="application/json",
            text=call_text,
            meta=dict(meta),
        ),
        NewBlock(
            type=b.TOOL_RESULT,
            author="tool",
            turn_id=turn_id,
            mime=result_mime,
            text=result_text,
            meta={**meta, "status": status},
        ),
    ]
