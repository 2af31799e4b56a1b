"""Thinking blocks (``react.thinking``): a model's reasoning, stored so that its own provider's
native format sends it back unchanged (DESIGN "Native formats and reasoning"). Pure.

With extended thinking on, Anthropic rejects a request whose last assistant message holds a
``tool_use`` without the signed ``thinking`` / ``redacted_thinking`` block that preceded it, and
OpenAI reasoning models expect their ``reasoning`` items (with ``encrypted_content``) back in the
Responses input. The block's shape, by ``meta.provider`` and ``meta.kind``:

* ``anthropic`` / ``thinking``: ``text`` is the thinking text, ``meta.signature`` its signature;
* ``anthropic`` / ``redacted_thinking``: ``meta.data`` the encrypted thinking, no ``text``;
* ``openai`` / ``reasoning``: ``meta.id`` the item id (``rs_…``), ``meta.summary`` its summary
  parts (``[{"type": "summary_text", "text": …}]``, may be empty), ``meta.encrypted_content``
  (a string, or absent / null when the response was stored), no ``text``;
* ``google`` / ``thought``: a Gemini thought part (``thought: true``): ``text`` its text,
  ``meta.signature`` its ``thought_signature`` (base64, optional);
* ``google`` / ``signature``: the ``thought_signature`` (``meta.signature``, base64, required) of
  the Gemini part stored right after it (a function call, a text), no ``text``.

Other keys of ``meta`` are kept and ignored. A thinking block carries no binary payload and is
not the user's.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from timeline_app.domain.blocks import THINKING, Block

PROVIDERS: dict[str, tuple[str, ...]] = {
    "anthropic": ("thinking", "redacted_thinking"),
    "openai": ("reasoning",),
    "google": ("thought", "signature"),
}
# The native format that sends back each provider's thinking (its opaque parts: signatures,
# encrypted content); the other native formats keep only its readable text, the seed formats none.
FORMAT_PROVIDER: dict[str, str] = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "gemini_contents": "google",
}
NATIVE_FORMATS: tuple[str, ...] = ("anthropic_messages", "openai_responses", "openai_chat", "gemini_contents")


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def thinking_block_problems(
    *, type: str, author: str, text: str, meta: Any, has_data: bool, where: str = "meta"
) -> dict[str, str]:
    """What is wrong with a ``react.thinking`` block on any write path (blocks API, turns, import):
    empty when nothing is, and for every other type."""
    if type != THINKING:
        return {}
    problems: dict[str, str] = {}
    block_where = where.rsplit(".meta", 1)[0] if where.endswith(".meta") else ""
    at = f"{block_where}." if block_where else ""
    if author == "user":
        problems[f"{at}author"] = "a thinking block is the model's: its author may not be user"
    if has_data:
        problems[f"{at}base64"] = "a thinking block carries no binary payload"
    if not isinstance(meta, dict):
        problems[where] = "required: {provider, kind, …}"
        return problems
    provider = meta.get("provider")
    if not isinstance(provider, str) or provider not in PROVIDERS:
        problems[f"{where}.provider"] = f"required: one of {', '.join(PROVIDERS)}"
        return problems
    kind = meta.get("kind")
    kinds = PROVIDERS[provider]
    if not isinstance(kind, str) or kind not in kinds:
        problems[f"{where}.kind"] = f"required for provider {provider}: one of {', '.join(kinds)}"
        return problems
    if kind == "thinking":
        if not _nonempty_str(meta.get("signature")):
            problems[f"{where}.signature"] = "required: the thinking block's signature, a non-empty string"
        return problems
    if provider == "google":
        signature = meta.get("signature")
        if (kind == "signature" or signature is not None) and not _is_base64(signature):
            problems[f"{where}.signature"] = (
                "required: the part's thought_signature as base64"
                if kind == "signature"
                else "must be the part's thought_signature as base64"
            )
        if kind == "signature" and text:
            problems[f"{at}text"] = "a signature block has no text (its signature lives in meta)"
        if kind == "thought" and not text and signature is None:
            problems[f"{at}text"] = "required: the thought's text (or a signature)"
        return problems
    if text:
        problems[f"{at}text"] = f"a {kind} block has no text (its content lives in meta)"
    if kind == "redacted_thinking":
        if not _nonempty_str(meta.get("data")):
            problems[f"{where}.data"] = "required: the redacted thinking's data, a non-empty string"
        return problems
    if not _nonempty_str(meta.get("id")):
        problems[f"{where}.id"] = "required: the reasoning item's id, a non-empty string"
    encrypted = meta.get("encrypted_content")
    if encrypted is not None and not isinstance(encrypted, str):
        problems[f"{where}.encrypted_content"] = "must be a string or null"
    summary = meta.get("summary")
    if not isinstance(summary, list):
        problems[f"{where}.summary"] = (
            'required: a list of {"type": "summary_text", "text": …} (may be empty)'
        )
    else:
        for i, part in enumerate(summary):
            if not (
                isinstance(part, dict)
                and set(part) == {"type", "text"}
                and part["type"] == "summary_text"
                and isinstance(part["text"], str)
            ):
                problems[f"{where}.summary[{i}]"] = 'must be {"type": "summary_text", "text": <string>}'
    return problems


def _is_base64(value: Any) -> bool:
    if not _nonempty_str(value):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def thinking_provider(block: Block) -> str:
    """The provider whose native format sends ``block`` back; empty for any other block."""
    if block.type != THINKING:
        return ""
    provider = block.meta.get("provider")
    return provider if isinstance(provider, str) and provider in PROVIDERS else ""


def renders_in(block: Block, format: str) -> bool:
    """Does ``block`` appear in a render of ``format``? Every block but a thinking block does. A
    visible thinking block appears in its provider's native format (opaque parts and all), and in
    the other native formats when it has readable text (thinking text, reasoning summary, thought
    text: :func:`readable_text`); never in the seed formats, never hidden (a replacement text
    cannot stand in for the signed original)."""
    if block.type != THINKING:
        return True
    if block.hidden or format not in NATIVE_FORMATS:
        return False
    return is_own_thinking(block, format) or bool(readable_text(block).strip())


def is_own_thinking(block: Block, format: str) -> bool:
    """Is ``block`` a thinking block that ``format`` sends back whole (its provider's)?"""
    return FORMAT_PROVIDER.get(format) == thinking_provider(block) != ""


def readable_text(block: Block) -> str:
    """What another provider's format keeps of a thinking block: its readable text."""
    return thinking_text_and_opaque(block)[0]


def native_thinking(block: Block) -> dict[str, Any]:
    """The provider's own content block / input item for a (valid) thinking block."""
    meta = block.meta
    kind = meta.get("kind")
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": meta.get("signature", "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": meta.get("data", "")}
    if kind in ("thought", "signature"):
        part: dict[str, Any] = {"text": block.text, "thought": True} if kind == "thought" else {}
        if isinstance(meta.get("signature"), str):
            part["thought_signature"] = meta["signature"]
        return part
    summary = meta.get("summary")
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": meta.get("id", ""),
        "summary": [
            {"type": "summary_text", "text": part["text"]}
            for part in (summary if isinstance(summary, list) else [])
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ],
    }
    if isinstance(meta.get("encrypted_content"), str):
        item["encrypted_content"] = meta["encrypted_content"]
    return item


def thinking_text_and_opaque(block: Block) -> tuple[str, str]:
    """What a thinking block costs, as ``(readable text, opaque payload)``: the thinking text or
    the reasoning summary, and the redacted data or the encrypted content (the signature is not
    counted)."""
    meta = block.meta
    if meta.get("kind") == "redacted_thinking":
        data = meta.get("data")
        return "", data if isinstance(data, str) else ""
    if meta.get("kind") == "reasoning":
        summary = meta.get("summary")
        texts = [
            p["text"]
            for p in (summary if isinstance(summary, list) else [])
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        encrypted = meta.get("encrypted_content")
        return "\n\n".join(texts), encrypted if isinstance(encrypted, str) else ""
    if meta.get("kind") == "signature":
        return "", ""
    return block.text, ""


def opaque_tokens(opaque: str) -> int:
    """An estimate of the tokens an encrypted payload stands for: one per four characters."""
    return math.ceil(len(opaque) / 4)
