"""The providers' own request formats with native tool use (pure): ``anthropic_messages``,
``openai_responses``, ``openai_chat``. See ``docs/native-formats.md``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from timeline_app.domain.blocks import Block
from timeline_app.domain.thinking import FORMAT_PROVIDER

from .anthropic import anthropic_request
from .conversation import stream_conversation
from .openai_chat import chat_messages
from .openai_responses import responses_input

NATIVE_FORMATS: tuple[str, ...] = ("anthropic_messages", "openai_responses", "openai_chat")


@dataclass(frozen=True)
class NativeRender:
    """``request``: the keyword arguments of the SDK call (without ``model``); ``items``: its
    message list (``messages`` or ``input``); ``cache_points``: indices in ``items`` of the
    messages holding a marker; ``item_of``: for each stable block index, the item it ends in."""

    request: dict[str, Any]
    items: list[dict[str, Any]]
    cache_points: list[int]
    marked_seqs: list[int]
    item_of: dict[int, int]


def render_native(
    stable: Sequence[Block],
    *,
    format: str,
    tail: Sequence[str] = (),
    points: Sequence[int] = (),
    system_text: str = "",
    system_tokens: int = 0,
    cache_min_tokens: int = 1024,
    cache_ttl_seconds: int = 300,
    prompt_cache_key: str = "",
) -> NativeRender:
    # Thinking blocks come back only in their provider's format (Chat has no place for them).
    conversation = stream_conversation(stable, tail, provider=FORMAT_PROVIDER.get(format, ""))
    if format == "anthropic_messages":
        rendered = anthropic_request(
            conversation,
            stable,
            points=points,
            system_text=system_text,
            system_tokens=system_tokens,
            cache_min_tokens=cache_min_tokens,
            cache_ttl_seconds=cache_ttl_seconds,
        )
        return NativeRender(
            request=rendered.request,
            items=rendered.request["messages"],
            cache_points=rendered.cache_points,
            marked_seqs=rendered.marked_seqs,
            item_of=rendered.message_of,
        )
    request: dict[str, Any]
    if format == "openai_responses":
        items, item_of = responses_input(conversation)
        request = {"input": items}
        if system_text.strip():
            request["instructions"] = system_text
    elif format == "openai_chat":
        items, item_of = chat_messages(conversation)
        if system_text.strip():
            items.insert(0, {"role": "system", "content": system_text})
            item_of = {k: v + 1 for k, v in item_of.items()}
        request = {"messages": items}
    else:
        raise ValueError(f"not a native format: {format!r}")
    if prompt_cache_key:
        request["prompt_cache_key"] = prompt_cache_key
    return NativeRender(request=request, items=items, cache_points=[], marked_seqs=[], item_of=item_of)
