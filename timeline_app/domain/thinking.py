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
* ``gemini`` / ``thought``: a thought part (``thought: true``), ``text`` its thought summary (may be
  empty), ``meta.signature`` its ``thoughtSignature`` (base64, optional);
* ``gemini`` / ``signature``: the ``thoughtSignature`` (``meta.signature``, base64) a Gemini reply
  carried on its next part, the block stored right after this one (``meta.part``:
  ``function_call`` or ``text``); no ``text``. The ``gemini_contents`` render puts it back on that
  part.

Other keys of ``meta`` are kept and ignored. A thinking block carries no binary payload and is
not the user's.
"""

from __future__ import annotations

import math
from typing import Any

from timeline_app.domain.blocks import THINKING, Block

PROVIDERS: dict[str, tuple[str, ...]] = {
    "anthropic": ("thinking", "redacted_thinking"),
    "openai": ("reasoning",),
    "gemini": ("thought", "signature"),
}
# The native format that sends back each provider's thinking; every other format leaves it out.
FORMAT_PROVIDER: dict[str, str] = {"anthropic_messages": "anthropic", "openai_responses": "openai"}


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
    if kind == "thought":
        if "signature" in meta and not _nonempty_str(meta["signature"]):
            problems[f"{where}.signature"] = "the thought signature, when given, is a non-empty string"
        return problems
    if kind == "signature":
        if not _nonempty_str(meta.get("signature")):
            problems[f"{where}.signature"] = "required: the thought signature, a non-empty string"
        if text:
            problems[f"{at}text"] = "a signature block has no text (its content lives in meta)"
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


def thinking_provider(block: Block) -> str:
    """The provider whose native format sends ``block`` back; empty for any other block."""
    if block.type != THINKING:
        return ""
    provider = block.meta.get("provider")
    return provider if isinstance(provider, str) and provider in PROVIDERS else ""


def renders_in(block: Block, format: str) -> bool:
    """Does ``block`` appear in a render of ``format``? Every block but a thinking block does; a
    thinking block only in its provider's native format and only while visible (a hidden one
    cannot stand in for the signed original, so it is left out like in every other format)."""
    if block.type != THINKING:
        return True
    return not block.hidden and FORMAT_PROVIDER.get(format) == thinking_provider(block) != ""


def native_thinking(block: Block) -> dict[str, Any]:
    """The provider's own content block / input item for a (valid) thinking block."""
    meta = block.meta
    kind = meta.get("kind")
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": meta.get("signature", "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": meta.get("data", "")}
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
    return block.text, ""


def opaque_tokens(opaque: str) -> int:
    """An estimate of the tokens an encrypted payload stands for: one per four characters."""
    return math.ceil(len(opaque) / 4)
