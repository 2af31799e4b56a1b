"""Block text and the three output formats (seed 000 "Visible Timeline", seed 003 "Rendering").

Pure: no Django, no I/O, no clock. Byte stability (DESIGN §4): the values built here depend only on
the blocks, and ``stable_json`` (sorted keys, no ASCII escaping) is their one serialisation; the
API's renderer (``timeline_app.api.renderers.StableJSONRenderer``) applies the same rule, and
``tests/api/test_render_bytes.py`` pins equal bytes for equal blocks over HTTP.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from timeline_app.domain.block_text import attachment_name, binary_placeholder, block_text, path_lines
from timeline_app.domain.blocks import (
    Block,
    sources_pool_path,
)
from timeline_app.domain.text import ellipsize

Format = Literal[
    "anthropic", "openai", "text", "anthropic_messages", "openai_responses", "openai_chat", "gemini_contents"
]
# The seed's dialect (one user message of parts), then the providers' own formats (``native/``).
FORMATS: tuple[str, ...] = (
    "anthropic",
    "openai",
    "text",
    "anthropic_messages",
    "openai_responses",
    "openai_chat",
    "gemini_contents",
)

# Media types the Anthropic API accepts for base64 images and documents.
ANTHROPIC_IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
ANTHROPIC_DOCUMENT_MIMES = frozenset({"application/pdf"})
# OpenAI chat accepts the same raster images as data URLs and PDFs as files.
OPENAI_IMAGE_MIMES = ANTHROPIC_IMAGE_MIMES
OPENAI_FILE_MIMES = frozenset({"application/pdf"})

SOURCE_TEXT_MAX_CHARS = 600
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}


# --------------------------------------------------------------------------------------------
# Tail: sources pool and announce
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One entry of the conversation's sources pool (seed 003)."""

    sid: int
    url: str
    title: str = ""
    text: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def sources_pool_text(sources: Sequence[Source], *, text_limit: int = SOURCE_TEXT_MAX_CHARS) -> str:
    """``[SOURCES POOL]`` with its ``so:`` path and one entry per source, ordered by sid."""
    if not sources:
        return ""
    ordered = sorted(sources, key=lambda s: s.sid)
    lines = ["[SOURCES POOL]", f"[path: {sources_pool_path(ordered[0].sid, ordered[-1].sid)}]"]
    for source in ordered:
        label = " — ".join(x for x in (source.title.strip(), source.url.strip()) if x)
        lines.append(f"[{source.sid}] {label}".rstrip())
        if source.text.strip():
            lines.append(ellipsize(source.text.strip(), text_limit))
    return "\n".join(lines)


def budget_note_text(*, context_tokens: int, max_tokens: int, compaction_at: int) -> str:
    """The one line a render's tail ends with when ``budget_note`` is on (issue 35)."""
    return f"[context: {context_tokens:,} of {max_tokens:,} tokens; compaction at {compaction_at:,}]"


def announce_text(announce: Sequence[str], active_plan: Block | None = None) -> str:
    """``[ANNOUNCE]`` with each announce text, then the ``[ACTIVE PLAN]`` section if any."""
    texts = [a for a in announce if a.strip()]
    if not texts and active_plan is None:
        return ""
    lines = ["[ANNOUNCE]", *texts]
    if active_plan is not None:
        lines.append("[ACTIVE PLAN]")
        lines.extend(path_lines(active_plan))
        if active_plan.text:
            lines.append(active_plan.text)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Parts: a format-neutral intermediate, then the per-format dicts
# --------------------------------------------------------------------------------------------


class Part(NamedTuple):
    """One emitted piece: ``text``, or a binary payload (``image``/``document``) of a block.
    A named tuple: a render builds one per block, and a frozen dataclass's ``__init__`` made
    that half of the cost of a block's parts."""

    kind: Literal["text", "image", "document"]
    text: str = ""
    mime: str = ""
    data: str = ""
    filename: str = ""
    placeholder: str = ""


def block_parts(block: Block) -> list[Part]:
    """The text part of a block, then its binary part when it has a visible payload."""
    parts = [Part(kind="text", text=block_text(block))]
    if block.data and not block.hidden:
        kind: Literal["image", "document"] = "image" if block.mime.startswith("image/") else "document"
        parts.append(
            Part(
                kind=kind,
                mime=block.mime,
                data=block.data,
                filename=attachment_name(block) or f"block-{block.seq}",
                placeholder=binary_placeholder(block),
            )
        )
    return parts


def anthropic_part(part: Part, *, cached: bool = False, binary: bool = True) -> dict[str, Any]:
    """One Anthropic content block; ``binary=False`` gives the text format's placeholder."""
    out: dict[str, Any]
    if part.kind == "image" and binary and part.mime in ANTHROPIC_IMAGE_MIMES:
        out = {"type": "image", "source": {"type": "base64", "media_type": part.mime, "data": part.data}}
    elif part.kind == "document" and binary and part.mime in ANTHROPIC_DOCUMENT_MIMES:
        out = {"type": "document", "source": {"type": "base64", "media_type": part.mime, "data": part.data}}
    else:
        out = {"type": "text", "text": part.text if part.kind == "text" else part.placeholder}
    if cached:
        out["cache_control"] = dict(CACHE_CONTROL)
    return out


def openai_content_part(part: Part) -> dict[str, Any]:
    """One OpenAI chat content part (no cache control: the provider caches prefixes itself)."""
    if part.kind == "image" and part.mime in OPENAI_IMAGE_MIMES:
        return {"type": "image_url", "image_url": {"url": f"data:{part.mime};base64,{part.data}"}}
    if part.kind == "document" and part.mime in OPENAI_FILE_MIMES:
        return {
            "type": "file",
            "file": {"filename": part.filename, "file_data": f"data:{part.mime};base64,{part.data}"},
        }
    return {"type": "text", "text": part.text if part.kind == "text" else part.placeholder}


def openai_message(block: Block) -> dict[str, Any] | None:
    """The stored OpenAI message of a block of a named OpenAI context, if it has one.

    A hidden message keeps its role, ``tool_calls`` and ``tool_call_id`` (so tool pairs stay
    valid) and carries its replacement text as content.
    """
    message = block.meta.get("openai_message")
    if not isinstance(message, dict):
        return None
    copied = copy.deepcopy(message)
    if block.hidden:
        copied["content"] = block.replacement_text
    return copied


def openai_messages(
    items: Iterable[Block | Part], positions: list[int] | None = None
) -> list[dict[str, Any]]:
    """Blocks with a stored message render as that message; everything else coalesces into
    user messages (consecutive blocks and tail parts share one message). ``positions``, when
    given, receives the index of the message each item lands in."""
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    where = positions if positions is not None else []

    def flush() -> None:
        if pending:
            messages.append({"role": "user", "content": list(pending)})
            pending.clear()

    for item in items:
        if isinstance(item, Block):
            stored = openai_message(item)
            if stored is not None:
                flush()
                where.append(len(messages))
                messages.append(stored)
                continue
            where.append(len(messages))
            pending.extend(openai_content_part(p) for p in block_parts(item))
        else:
            where.append(len(messages))
            pending.append(openai_content_part(item))
    flush()
    return messages


def debug_text(parts: Sequence[dict[str, Any]], cache_points: Sequence[int]) -> str:
    """Text-format debug view: parts joined by blank lines, ``=>[k]`` after each cache point."""
    marks = {index: k for k, index in enumerate(sorted(cache_points), start=1)}
    chunks: list[str] = []
    for index, part in enumerate(parts):
        text = str(part.get("text", ""))
        if index in marks:
            text += f"\n=>[{marks[index]}]"
        chunks.append(text)
    return "\n\n".join(chunks)
