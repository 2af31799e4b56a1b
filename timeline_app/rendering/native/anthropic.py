"""``anthropic_messages``: ``system`` + ``messages`` for ``client.messages.create`` (pure).

System texts (the request's ``system`` and a named context's system messages) go to the top-level
``system``; the remaining messages merge by role so they alternate, starting with ``user``. Cache
markers (``cache_control``) sit on the native content blocks of the seed's three cache points, at
most four in the request with the system's, none whose prefix is shorter than ``cache_min_tokens``,
``"ttl": "1h"`` when the TTL setting is an hour or more (all markers then carry it, so 1-hour
entries never follow 5-minute ones).

Thinking blocks (``thinking`` with its signature, ``redacted_thinking``) come back unchanged and
first in their assistant message (the API wants the last assistant message to start with one
before its ``tool_use``); they never carry ``cache_control`` (the API does not take it there): a
cache point on one goes to the nearest earlier block that can carry it, as for any block that
renders nothing markable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from timeline_app.domain.blocks import Block

from ..cache_plan import ANTHROPIC, choose_slots
from ..formats import ANTHROPIC_DOCUMENT_MIMES, ANTHROPIC_IMAGE_MIMES
from ..usage.request_tokens import anthropic_block_tokens
from .conversation import CONTINUES_TEXT
from .entries import Content, Conversation, Entry, Media, Text, Thinking, ToolResult, ToolUse

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def _content_block(part: Content) -> dict[str, Any]:
    if isinstance(part, Media):
        if part.url and part.kind == "image":
            return {"type": "image", "source": {"type": "url", "url": part.url}}
        allowed = ANTHROPIC_IMAGE_MIMES if part.kind == "image" else ANTHROPIC_DOCUMENT_MIMES
        if part.data and part.mime in allowed:
            source = {"type": "base64", "media_type": part.mime, "data": part.data}
            return {"type": part.kind, "source": source}
        return {"type": "text", "text": part.placeholder}
    return {"type": "text", "text": part.text}


def _entry_block(entry: Entry) -> dict[str, Any]:
    if isinstance(entry, Thinking):
        return dict(entry.native)
    if isinstance(entry, ToolUse):
        return {"type": "tool_use", "id": entry.id, "name": entry.name, "input": entry.input}
    if isinstance(entry, ToolResult):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": entry.id,
            "content": [_content_block(c) for c in entry.content],
        }
        if entry.is_error:
            out["is_error"] = True
        return out
    return _content_block(entry)


def _origins(entry: Entry) -> tuple[int, ...]:
    if isinstance(entry, ToolResult):
        return entry.origins
    return (entry.origin,) if entry.origin >= 0 else ()


@dataclass(frozen=True)
class AnthropicRender:
    request: dict[str, Any]
    # Indices in ``messages`` of the messages holding a marker, and the seqs of the marked blocks.
    cache_points: list[int]
    marked_seqs: list[int]
    # For each stable block index, the index of the message its content landed in.
    message_of: dict[int, int]
    # For each stable block index, the request's tokens through the content block where it ends
    # (``usage.request_tokens``: the length of the prefix a marker there caches).
    through: dict[int, int]
    # The request's tokens (its system prompt as ``system_tokens``).
    tokens: int


# (role, [(block, origins)]): the request's messages before their markers.
_Merged = list[tuple[str, list[tuple[dict[str, Any], tuple[int, ...]]]]]
# (message, block) in the merged messages.
_At = tuple[int, int]


def _merge_by_role(
    conversation: Conversation, stable: Sequence[Block], system: list[dict[str, Any]]
) -> tuple[_Merged, int]:
    """The messages merged by role so they alternate, starting with ``user``, thinking first in an
    assistant message; system texts appended to ``system``, with the tokens of their blocks."""
    system_origin_tokens = 0
    merged: _Merged = []
    for message in conversation.messages:
        if message.role == "system":
            for entry in message.content:
                if isinstance(entry, Text):
                    system.append({"type": "text", "text": entry.text})
                    system_origin_tokens += anthropic_block_tokens(system[-1])
            continue
        items = [(_entry_block(e), _origins(e)) for e in message.content]
        if merged and merged[-1][0] == message.role:
            merged[-1][1].extend(items)
        else:
            merged.append((message.role, items))
    if merged and merged[0][0] == "assistant":
        merged.insert(0, ("user", [({"type": "text", "text": CONTINUES_TEXT}, ())]))
    for role, items in merged:
        if role == "assistant":
            # Thinking first, in stored order; the rest in stored order after it.
            items.sort(key=lambda item: item[0]["type"] not in THINKING_TYPES)
    return merged, system_origin_tokens


def _positions(
    merged: _Merged, stable: Sequence[Block], *, head_tokens: int
) -> tuple[dict[int, _At], dict[int, _At], dict[_At, int]]:
    """Where each stable block's content ends, in final order; the same for the blocks that can
    carry a marker (not a thinking block); and the request's tokens through each position
    (``usage.request_tokens``: the length of the prefix a marker there caches)."""
    final: dict[int, _At] = {}
    markable: dict[int, _At] = {}
    cumulative: dict[_At, int] = {}
    running = head_tokens
    for m, (_, items) in enumerate(merged):
        for e, (block, origins) in enumerate(items):
            for origin in origins:
                final[origin] = (m, e)
                if block["type"] not in THINKING_TYPES:
                    markable[origin] = (m, e)
            running += anthropic_block_tokens(block)
            cumulative[(m, e)] = running
    return final, markable, cumulative


def anthropic_request(
    conversation: Conversation,
    stable: Sequence[Block],
    *,
    points: Sequence[int],
    system_text: str,
    system_tokens: int,
    cache_min_tokens: int,
    cache_ttl_seconds: int,
) -> AnthropicRender:
    """The request body, with markers on the blocks at the stable indices ``points``."""
    system: list[dict[str, Any]] = [{"type": "text", "text": system_text}] if system_text.strip() else []
    merged, system_origin_tokens = _merge_by_role(conversation, stable, system)
    final, markable, cumulative = _positions(merged, stable, head_tokens=system_tokens + system_origin_tokens)

    control = ANTHROPIC.marker(cache_ttl_seconds)
    head_tokens = system_tokens + system_origin_tokens if system else 0
    plan = choose_slots(
        points,
        markable,
        len(stable),
        tokens=lambda index: cumulative[markable[index]],
        seq=lambda index: stable[index].seq,
        style=ANTHROPIC,
        head_tokens=head_tokens,
        min_tokens=cache_min_tokens,
    )
    if plan.head:
        system[-1]["cache_control"] = dict(control)
    cache_points: list[int] = []
    marked: list[int] = []
    for slot in plan.slots:
        m, e = slot.at
        merged[m][1][e][0]["cache_control"] = dict(control)
        if m not in cache_points:
            cache_points.append(m)
        marked.append(slot.seq)

    messages = [{"role": role, "content": [block for block, _ in items]} for role, items in merged]
    request: dict[str, Any] = {"messages": messages}
    if system:
        request["system"] = system
    return AnthropicRender(
        request=request,
        cache_points=cache_points,
        marked_seqs=marked,
        message_of={origin: m for origin, (m, _) in final.items()},
        through={origin: cumulative[at] for origin, at in final.items()},
        tokens=max(cumulative.values(), default=system_tokens + system_origin_tokens),
    )
