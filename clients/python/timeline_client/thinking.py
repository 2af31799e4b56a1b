"""A model's thinking as a ``react.thinking`` block to store (see docs/native-formats.md).

With extended thinking on, Anthropic rejects a request whose last assistant message holds a
``tool_use`` without the signed thinking block that preceded it; OpenAI reasoning models expect
their ``reasoning`` items back. Store them with the rest of the reply, in the reply's order, and the
service's ``anthropic_messages`` / ``openai_responses`` render sends them back unchanged.
"""

from __future__ import annotations

from typing import Any


def _field(part: Any, name: str) -> Any:
    return part.get(name) if isinstance(part, dict) else getattr(part, name, None)


def thinking_block(part: Any, **fields: Any) -> dict[str, Any] | None:
    """The block for one part of a reply: an Anthropic ``thinking`` / ``redacted_thinking``
    content block or an OpenAI Responses ``reasoning`` output item (SDK object or dict); None for
    any other part. ``fields`` (``id``, ``turn_id``, ``author``…) are added to the block."""
    kind = _field(part, "type")
    if kind == "thinking":
        meta: dict[str, Any] = {"provider": "anthropic", "kind": kind, "signature": _field(part, "signature")}
        block = {"type": "react.thinking", "author": "assistant", "text": _field(part, "thinking") or ""}
    elif kind == "redacted_thinking":
        meta = {"provider": "anthropic", "kind": kind, "data": _field(part, "data")}
        block = {"type": "react.thinking", "author": "assistant", "text": ""}
    elif kind == "reasoning":
        summary = [
            {"type": "summary_text", "text": _field(s, "text")} for s in (_field(part, "summary") or [])
        ]
        meta = {"provider": "openai", "kind": kind, "id": _field(part, "id"), "summary": summary}
        encrypted = _field(part, "encrypted_content")
        if encrypted is not None:
            meta["encrypted_content"] = encrypted
        block = {"type": "react.thinking", "author": "assistant", "text": ""}
    else:
        return None
    return {**block, "meta": meta, **fields}
