"""The providers' own request formats with native tool use (pure): ``anthropic_messages``,
``openai_responses``, ``openai_chat``, ``gemini_contents``. See ``docs/native-formats.md``.

Every ``anthropic_messages`` and ``gemini_contents`` render ends with a user message: when the
history (and its tail) ends with the model's, or is empty, a user message of ``continue_text`` is
appended after everything else, so no cache marker moves (current Claude models answer a request
whose last message is the assistant's with a 400); ``prefill`` keeps the assistant's message last
for the models that still take one. The OpenAI formats keep the history as it is (the API takes
an assistant message last). ``NativeRender.ending`` says which happened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from timeline_app.domain.blocks import Block
from timeline_app.domain.thinking import FORMAT_PROVIDER, NATIVE_FORMATS

from ..cache_plan import NO_MARKERS, MarkerStyle, Plan, choose_slots, earlier_points, request_ends
from ..usage.request_tokens import anthropic_block_tokens, openai_part_tokens, openai_parts
from .anthropic import anthropic_request
from .conversation import stream_conversation
from .entries import Conversation
from .gemini import gemini_request
from .openai_chat import chat_items
from .openai_responses import OpenAIItems, responses_items

CHAT_CACHE_TTLS = ("30m",)

__all__ = ["CONTINUED", "ENDINGS", "NATIVE_FORMATS", "NativeRender", "render_native"]

# ``NativeRender.ending``: how the request ends.
ENDS_WITH_USER = "user"  # the history ends with the user's message (or a tool result): as it is
CONTINUED = "continue_text"  # it ended with the model's: a user message of continue_text appended
PREFILL = "prefill"  # it ends with the model's, kept last as the render asked (``prefill``)
ENDS_WITH_ASSISTANT = "assistant"  # OpenAI formats: it ends with the assistant's, as the history does
ENDINGS = (ENDS_WITH_USER, CONTINUED, PREFILL, ENDS_WITH_ASSISTANT)


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
    ending: str = ENDS_WITH_USER
    # For each stable block index, the request's tokens through the content where it ends, and
    # the whole request's (``usage.request_tokens``, the system prompt as ``system_tokens``):
    # the prefix lengths the usage forecast reads. Empty for the formats without markers.
    through: dict[int, int] = field(default_factory=dict)
    request_tokens: int | None = None


def _end_with_user(
    items: list[dict[str, Any]], *, model_role: str, message: dict[str, Any], prefill: bool
) -> str:
    """Append ``message`` (the user's ``continue_text``) when ``items`` is empty or ends with the
    model's, unless ``prefill``; return the ending."""
    if items and items[-1].get("role") != model_role:
        return ENDS_WITH_USER
    if prefill and items:
        return PREFILL
    items.append(message)
    return CONTINUED


def _openai_ending(items: list[dict[str, Any]]) -> str:
    last = next((item for item in reversed(items) if item.get("role") != "system"), None)
    return ENDS_WITH_ASSISTANT if last is not None and last.get("role") == "assistant" else ENDS_WITH_USER


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
    continue_text: str = "Continue.",
    prefill: bool = False,
    cache_style: MarkerStyle = NO_MARKERS,
    read_through: int | None = None,
) -> NativeRender:
    """``cache_style``: the format's markers (``cache_plan.marker_style``): for the OpenAI formats
    ``openai_explicit`` for GPT-5.6 and later, none otherwise; ``anthropic_messages`` always
    carries Anthropic's, ``gemini_contents`` none (``GEMINI``: implicit caching only)."""
    # Thinking blocks come back whole only in their provider's format (Chat has no place for
    # them); the other formats keep their readable text.
    conversation = stream_conversation(stable, tail, provider=FORMAT_PROVIDER.get(format, ""))
    if format == "anthropic_messages":
        return _render_anthropic(
            stable,
            conversation,
            points=points,
            system_text=system_text,
            system_tokens=system_tokens,
            cache_min_tokens=cache_min_tokens,
            cache_ttl_seconds=cache_ttl_seconds,
            continue_text=continue_text,
            prefill=prefill,
        )
    if format == "gemini_contents":  # GEMINI: the planner places no marker, the request has none
        gemini = gemini_request(conversation, system_text=system_text)
        contents = gemini.request["contents"]
        ending = _end_with_user(
            contents,
            model_role="model",
            message={"role": "user", "parts": [{"text": continue_text}]},
            prefill=prefill,
        )
        return NativeRender(
            request=gemini.request,
            items=contents,
            cache_points=[],
            marked_seqs=[],
            item_of=gemini.content_of,
            ending=ending,
        )
    return _render_openai(
        stable,
        conversation,
        format=format,
        points=points,
        system_text=system_text,
        system_tokens=system_tokens,
        cache_min_tokens=cache_min_tokens,
        cache_ttl_seconds=cache_ttl_seconds,
        prompt_cache_key=prompt_cache_key,
        cache_style=cache_style,
        read_through=read_through,
    )


def _render_anthropic(
    stable: Sequence[Block],
    conversation: Conversation,
    *,
    points: Sequence[int],
    system_text: str,
    system_tokens: int,
    cache_min_tokens: int,
    cache_ttl_seconds: int,
    continue_text: str,
    prefill: bool,
) -> NativeRender:
    rendered = anthropic_request(
        conversation,
        stable,
        points=points,
        system_text=system_text,
        system_tokens=system_tokens,
        cache_min_tokens=cache_min_tokens,
        cache_ttl_seconds=cache_ttl_seconds,
    )
    messages = rendered.request["messages"]
    ending = _end_with_user(
        messages,
        model_role="assistant",
        message={"role": "user", "content": [{"type": "text", "text": continue_text}]},
        prefill=prefill,
    )
    total = rendered.tokens
    if ending == CONTINUED:
        total += sum(anthropic_block_tokens(block) for block in messages[-1]["content"])
    return NativeRender(
        request=rendered.request,
        items=messages,
        cache_points=rendered.cache_points,
        marked_seqs=rendered.marked_seqs,
        item_of=rendered.message_of,
        ending=ending,
        through=rendered.through,
        request_tokens=total,
    )


@dataclass(frozen=True)
class _OpenAIRequest:
    """An OpenAI format's request before its markers: the items (``head``, the system message,
    first when there is one) and the marker style the format takes."""

    request: dict[str, Any]
    built: OpenAIItems
    items: list[dict[str, Any]]
    item_of: dict[int, int]
    head: dict[str, Any] | None
    style: MarkerStyle


def _openai_request(
    conversation: Conversation, *, format: str, system_text: str, style: MarkerStyle
) -> _OpenAIRequest:
    explicit = style.provider == "openai"
    built: OpenAIItems
    head: dict[str, Any] | None = None
    if format == "openai_responses":
        built = responses_items(conversation, explicit=explicit)
        request: dict[str, Any] = {"input": built.items}
        if system_text.strip() and explicit:  # a message, so that its part can carry a breakpoint
            head = {"role": "system", "content": [{"type": "input_text", "text": system_text}]}
        elif system_text.strip():
            request["instructions"] = system_text
    elif format == "openai_chat":
        built = chat_items(conversation, explicit=explicit)
        request = {"messages": built.items}
        # Chat Completions takes the 30-minute TTL only (its ``PromptCacheOptions.ttl``).
        style = replace(style, ttls=CHAT_CACHE_TTLS) if explicit else style
        if system_text.strip():
            content: Any = [{"type": "text", "text": system_text}] if explicit else system_text
            head = {"role": "system", "content": content}
    else:
        raise ValueError(f"not a native format: {format!r}")
    items, item_of = built.items, built.item_of
    if head is not None:
        items.insert(0, head)
        item_of = {k: v + 1 for k, v in item_of.items()}
    return _OpenAIRequest(request, built, items, item_of, head, style)


def _render_openai(
    stable: Sequence[Block],
    conversation: Conversation,
    *,
    format: str,
    points: Sequence[int],
    system_text: str,
    system_tokens: int,
    cache_min_tokens: int,
    cache_ttl_seconds: int,
    prompt_cache_key: str,
    cache_style: MarkerStyle,
    read_through: int | None = None,
) -> NativeRender:
    """``openai_responses`` and ``openai_chat``, with explicit breakpoints when ``cache_style``
    is OpenAI's (GPT-5.6 and later)."""
    built = _openai_request(conversation, format=format, system_text=system_text, style=cache_style)
    request, items, head, style = built.request, built.items, built.head, built.style
    cache_points: list[int] = []
    marked: list[int] = []
    through: dict[int, int] = {}
    request_tokens: int | None = None
    if style.provider == "openai":
        shift = 1 if head is not None else 0
        through, request_tokens = _openai_through(
            request, built.built, built.item_of, system_tokens=system_tokens, head=head is not None
        )
        plan = _openai_plan(
            stable,
            conversation,
            built.built,
            points=points,
            style=style,
            head_tokens=system_tokens if head is not None else 0,
            min_tokens=cache_min_tokens,
            through=through,
            read_through=read_through,
        )
        marker = style.marker(cache_ttl_seconds)
        if plan.head and head is not None:
            head["content"][-1][style.field] = dict(marker)
            cache_points.append(0)
        for slot in plan.slots:
            item, key, part = slot.at
            items[item + shift][key][part][style.field] = dict(marker)
            if item + shift not in cache_points:
                cache_points.append(item + shift)
            marked.append(slot.seq)
        request.update(style.request_fields(cache_ttl_seconds))
    if prompt_cache_key:
        request["prompt_cache_key"] = prompt_cache_key
    return NativeRender(
        request=request,
        items=items,
        cache_points=cache_points,
        marked_seqs=marked,
        item_of=built.item_of,
        ending=_openai_ending(items),
        through=through,
        request_tokens=request_tokens,
    )


def _openai_through(
    request: dict[str, Any], built: OpenAIItems, item_of: dict[int, int], *, system_tokens: int, head: bool
) -> tuple[dict[int, int], int]:
    """For each stable block index, the request's tokens through its last markable part (else
    through its item), and the whole request's: the parts in prompt order
    (``usage.request_tokens``), the system prompt counted as ``system_tokens``."""
    shift = 1 if head else 0
    at_part: dict[tuple[int, str, int], int] = {}
    item_end: dict[int, int] = {}
    running = 0
    for index, where, position, part in openai_parts(request):
        system = index == -1 or (head and index == 0)
        running += system_tokens if system and position == 0 else 0 if system else openai_part_tokens(part)
        at_part[(index, where, position)] = running
        item_end[index] = running
    through: dict[int, int] = {}
    for origin, item in item_of.items():
        path = built.markable.get(origin)
        if path is not None:
            through[origin] = at_part[(path[0] + shift, path[1], path[2])]
        else:
            through[origin] = item_end.get(item, 0)
    return through, running


def _openai_plan(
    stable: Sequence[Block],
    conversation: Conversation,
    built: OpenAIItems,
    *,
    points: Sequence[int],
    style: MarkerStyle,
    head_tokens: int,
    min_tokens: int,
    through: dict[int, int],
    read_through: int | None = None,
) -> Plan:
    """GPT-5.6 breakpoints: the seed's points and the end of every earlier model call (the cache
    matches only at a breakpoint a request repeats), on the input parts that can carry one."""
    roles = [message.role for message in conversation.messages]
    message_of = {index: at[0] for index, at in conversation.positions.items()}
    wanted = sorted({*points, *request_ends(message_of, roles), *earlier_points(stable)})
    return choose_slots(
        wanted,
        built.markable,
        len(stable),
        tokens=lambda index: through[index],
        seq=lambda index: stable[index].seq,
        style=style,
        head_tokens=head_tokens,
        min_tokens=min_tokens,
        read_through=read_through,
    )
