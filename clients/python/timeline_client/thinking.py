"""A model's thinking as a ``react.thinking`` block to store (see docs/native-formats.md).

With extended thinking on, Anthropic rejects a request whose last assistant message holds a
``tool_use`` without the signed thinking block that preceded it; OpenAI reasoning models expect
their ``reasoning`` items back; Gemini 3 its ``thought_signature`` on the parts that carried one.
Store them with the rest of the reply, in the reply's order, and the service's
``anthropic_messages`` / ``openai_responses`` / ``gemini_contents`` render sends them back unchanged.
"""

from __future__ import annotations

import base64
from typing import Any


def _field(part: Any, name: str) -> Any:
    return part.get(name) if isinstance(part, dict) else getattr(part, name, None)


def thinking_block(part: Any, **fields: Any) -> dict[str, Any] | None:
    """The block for one part of a reply: an Anthropic ``thinking`` / ``redacted_thinking``
    content block, an OpenAI Responses ``reasoning`` output item, or a Gemini ``Part`` that is a
    thought or carries a ``thought_signature`` (SDK object or dict; store the block before the
    part's own function call or text); None for any other part. ``fields`` (``id``, ``turn_id``,
    ``author``…) are added to the block."""
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
    elif kind is None and (_field(part, "thought") or _field(part, "thought_signature")):
        return _gemini_block(part, **fields)
    else:
        return None
    return {**block, "meta": meta, **fields}


def _gemini_block(part: Any, **fields: Any) -> dict[str, Any]:
    """A Gemini ``Part`` that is a thought, or carries a ``thought_signature``: a ``thought`` block
    (its text, its signature if any), or a ``signature`` block to store right before the part's
    own block (its function call or text), which then gets the signature back in renders."""
    signature = _field(part, "thought_signature")
    if isinstance(signature, bytes):
        signature = base64.b64encode(signature).decode("ascii")
    meta: dict[str, Any] = {"provider": "google"}
    if _field(part, "thought"):
        meta["kind"] = "thought"
        text = _field(part, "text") or ""
    else:
        meta["kind"] = "signature"
        text = ""
    if signature:
        meta["signature"] = signature
    return {"type": "react.thinking", "author": "assistant", "text": text, "meta": meta, **fields}
