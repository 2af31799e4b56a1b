"""The stable stream as a provider-neutral conversation with native tool use (pure).

Each block becomes events (user content, assistant text, a tool call, a tool result, a system
text); :func:`build_conversation` then pairs calls and results into alternating user / assistant
messages that every provider accepts:

* an assistant message holds the texts and ``tool_use`` entries of a run of assistant-side blocks;
* the next user message starts with one result per call of that message, in call order: the
  call's result blocks wherever they are stored later in the window (parallel calls, results out
  of order, a result stored after other rounds), or, when none is stored, a synthetic error result
  saying so (:data:`MISSING_RESULT`);
* a result whose call is not in the window (or that comes before it) is user text, never an orphan
  result;
* every tool-use id is unique in the request (``tool_names.provider_tool_id``) and every tool
  name matches the providers' pattern (``tool_names.provider_tool_name``).

System texts (messages of role ``system`` in a named context) stay in place as ``system``
messages; the Anthropic format moves them to the top-level ``system``.

A thinking block (``react.thinking``) is an assistant-side entry of its own, in place, in the
conversation built for its provider (``thinking_provider``); every other build keeps only its
readable text (the thinking text, the reasoning summary, the thought's text) as assistant text in
place, its opaque parts (signatures, redacted data, encrypted content) nowhere; a hidden one is
left out of every build.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    PLAN,
    PLAN_ACK,
    THINKING,
    TOOL_CALL,
    TOOL_RESULT,
    Block,
)
from timeline_app.domain.messages import message_text
from timeline_app.domain.thinking import native_thinking, readable_text, thinking_provider

from ..formats import openai_message
from .entries import Content, Conversation, Entry, Media, Message, Role, Text, Thinking, ToolResult, ToolUse
from .tool_names import provider_tool_id, provider_tool_name

MISSING_RESULT = "[no result stored for tool call {call_id}: the call crashed or its result is still pending]"
EMPTY_RESULT = "(empty result)"
CONTINUES_TEXT = "[conversation continues]"
ASSISTANT_TYPES = frozenset({NOTES, ASSISTANT_COMPLETION, PLAN, PLAN_ACK, "message.assistant"})
ERROR_STATUSES = frozenset({"error", "failed", "failure"})

# ---------------------------------------------------------------- events


@dataclass(frozen=True)
class _Event:
    kind: Literal["user", "assistant", "call", "result", "system", "thinking"]
    origin: int
    content: tuple[Content, ...] = ()
    call_id: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    orphan_text: str = ""
    thinking: Thinking | None = None


def _media_of(block: Block, origin: int) -> list[Content]:
    if not block.data or block.hidden:
        return []
    kind: Literal["image", "document"] = "image" if block.mime.startswith("image/") else "document"
    name = block.meta.get("name")
    tag = "image" if kind == "image" else "document"
    return [
        Media(
            kind=kind,
            mime=block.mime,
            data=block.data,
            filename=name if isinstance(name, str) and name else f"block-{block.seq}",
            placeholder=f"<{tag} media_type={block.mime} b64_len={len(block.data)}>",
            origin=origin,
        )
    ]


def _texts(text: str, origin: int) -> list[Content]:
    return [Text(text, origin)] if text.strip() else []


def _is_error(block: Block) -> bool:
    if block.meta.get("is_error") is True or block.meta.get("status") in ERROR_STATUSES:
        return True
    if block.mime == "application/json" and block.text.lstrip().startswith("{"):
        try:
            value = json.loads(block.text)
        except ValueError:
            return False
        return isinstance(value, dict) and value.get("status") in ERROR_STATUSES
    return False


_ENVELOPE_KEYS = frozenset({"tool_id", "name", "params", "input", "arguments", "tool_call_id"})


def _call_of(block: Block) -> tuple[str, dict[str, Any]]:
    """The tool name and input of a ``react.tool.call`` block: seed 000's envelope (``tool_id``,
    ``params``; ``name`` and ``input``/``arguments`` are read too), or a JSON object without any of
    those keys, which is the input itself (an agent that stored ``json.dumps(tool_use.input)``)."""
    parsed: Any = None
    try:
        parsed = json.loads(block.text) if block.text else None
    except ValueError:
        parsed = None
    meta_name = block.meta.get("tool_id") or block.meta.get("name")
    name = ""
    params: Any = None
    if isinstance(parsed, dict):
        name = str(parsed.get("tool_id") or parsed.get("name") or "")
        params = parsed.get("params", parsed.get("input", parsed.get("arguments")))
        if params is None and not _ENVELOPE_KEYS & parsed.keys():
            params = parsed
    elif block.text:
        params = {"text": block.text}
    if not name:
        name = str(meta_name) if meta_name else "unknown_tool"
    if block.hidden:
        return name, {}
    if params is None:
        return name, {}
    return name, params if isinstance(params, dict) else {"params": params}


def _image_url_media(url: str, origin: int) -> Media | None:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Media(
            kind="image" if head.startswith("image/") else "document",
            mime=head,
            data=data,
            filename=f"image-{origin}",
            placeholder=f"<image media_type={head} b64_len={len(data)}>",
            origin=origin,
        )
    if url.startswith(("http://", "https://")):
        return Media(kind="image", mime="", url=url, placeholder=f"[image: {url}]", origin=origin)
    return None


def _message_content(content: Any, origin: int) -> list[Content]:
    """An OpenAI message's content as neutral content (text, images, files; the rest as text)."""
    if isinstance(content, str):
        return _texts(content, origin)
    out: list[Content] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            out.extend(_texts(str(part.get("text", "")), origin))
            continue
        if kind == "image_url":
            image = part.get("image_url")
            media = (
                _image_url_media(str(image.get("url", "")), origin) if isinstance(image, Mapping) else None
            )
            if media is not None:
                out.append(media)
                continue
        if kind == "file":
            file = part.get("file")
            data = file.get("file_data") if isinstance(file, Mapping) else None
            if isinstance(data, str) and data.startswith("data:application/pdf;base64,"):
                filename = file.get("filename") if isinstance(file, Mapping) else None
                payload = data.split(",", 1)[1]
                out.append(
                    Media(
                        kind="document",
                        mime="application/pdf",
                        data=payload,
                        filename=filename if isinstance(filename, str) and filename else f"file-{origin}",
                        placeholder=f"<document media_type=application/pdf b64_len={len(payload)}>",
                        origin=origin,
                    )
                )
                continue
        out.extend(_texts(message_text({"content": [part]}), origin))
    return out


def _message_events(block: Block, message: dict[str, Any], origin: int) -> list[_Event]:
    role = message.get("role")
    content = message.get("content")
    if role == "system":
        return [_Event("system", origin, tuple(_message_content(content, origin)))]
    if role == "tool":
        call_id = str(message.get("tool_call_id") or "")
        parts = _message_content(content, origin)
        orphan = f"[tool result {call_id}]\n{message_text({'content': content})}".rstrip()
        return [_Event("result", origin, tuple(parts), call_id=call_id, orphan_text=orphan)]
    if role == "assistant":
        events = [_Event("assistant", origin, tuple(_message_content(content, origin)))]
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            events.append(_Event("assistant", origin, tuple(_texts(f"[refusal] {refusal}", origin))))
        for call in message.get("tool_calls") or []:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
            arguments = function.get("arguments", "") if isinstance(function, Mapping) else ""
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
            except ValueError:
                parsed = {"arguments": arguments}
            name = function.get("name") if isinstance(function, Mapping) else None
            events.append(
                _Event(
                    "call",
                    origin,
                    call_id=str(call.get("id") or ""),
                    name=str(name) if name else "unknown_tool",
                    input=parsed if isinstance(parsed, dict) else {"arguments": parsed},
                )
            )
        return [e for e in events if e.kind == "call" or e.content]
    return [_Event("user", origin, tuple(_message_content(content, origin)))]


def block_events(block: Block, origin: int, *, provider: str = "") -> list[_Event]:
    """What one block of the stable stream contributes to the conversation. ``provider``: whose
    thinking blocks the conversation carries (empty: nobody's)."""
    if block.type == THINKING:
        if block.hidden:
            return []
        if provider and thinking_provider(block) == provider:
            entry = Thinking(provider=provider, native=native_thinking(block), origin=origin)
            return [_Event("thinking", origin, thinking=entry)]
        return (
            [_Event("assistant", origin, tuple(_texts(readable_text(block), origin)))]
            if readable_text(block).strip()
            else []
        )
    stored = openai_message(block)
    if stored is not None:
        return _message_events(block, stored, origin)
    if block.type == TOOL_CALL:
        name, params = _call_of(block)
        events = []
        if block.hidden:
            # A hidden call keeps its pair; its replacement text is visible before it.
            events.append(_Event("assistant", origin, tuple(_texts(block_text(block), origin))))
        events.append(_Event("call", origin, call_id=block.tool_call_id, name=name, input=params))
        return events
    if block.type == TOOL_RESULT and block.tool_call_id:
        text = block_text(block)
        parts: list[Content] = [*_texts(text, origin), *_media_of(block, origin)]
        return [
            _Event(
                "result",
                origin,
                tuple(parts),
                call_id=block.tool_call_id,
                is_error=_is_error(block),
                orphan_text=text,
            )
        ]
    if block.type in ASSISTANT_TYPES or block.author == "assistant":
        text = block.text if not block.hidden else block_text(block)
        return [_Event("assistant", origin, tuple(_texts(text, origin)))] if text.strip() else []
    parts = [*_texts(block_text(block), origin), *_media_of(block, origin)]
    return [_Event("user", origin, tuple(parts))] if parts else []


# ---------------------------------------------------------------- pairing


def _result_owners(events: Sequence[_Event]) -> dict[int, list[int]]:
    """For each call event, the result events it answers: same call id, after it and before the
    next call with that id."""
    owners: dict[int, list[int]] = {}
    open_call: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.kind == "call" and event.call_id:
            open_call[event.call_id] = index
            owners[index] = []
        elif event.kind == "result" and event.call_id in open_call:
            owners[open_call[event.call_id]].append(index)
    return owners


class _Builder:
    """The messages of ``build_conversation``, built one event at a time."""

    def __init__(self, events: Sequence[_Event]):
        self.events = events
        self.owners = _result_owners(events)
        self.messages: list[Message] = []
        # The calls of the open assistant message, each with its event index, not yet answered.
        self.pending: list[tuple[ToolUse, int]] = []
        self.taken: set[int] = set()
        self.taken_ids: set[str] = set()
        self.positions: dict[int, tuple[int, int]] = {}

    def place(self, entry: Entry, origins: Sequence[int]) -> None:
        at = (len(self.messages) - 1, len(self.messages[-1].content))
        self.messages[-1].content.append(entry)
        for origin in origins:
            if origin >= 0:
                self.positions[origin] = at

    def open_message(self, role: Role) -> None:
        if self.messages and self.messages[-1].role == role:
            return
        self.messages.append(Message(role))

    def add(self, index: int, event: _Event) -> None:
        if event.kind == "thinking" and event.thinking is not None:
            self.open_message("assistant")
            self.place(event.thinking, [event.origin])
        elif event.kind == "assistant":
            self.open_message("assistant")
            for part in event.content:
                self.place(part, [event.origin])
        elif event.kind == "call":
            self.open_message("assistant")
            use = ToolUse(
                id=provider_tool_id(event.call_id or f"call_{index}", self.taken_ids),
                name=provider_tool_name(event.name),
                input=event.input,
                arguments=json.dumps(event.input, sort_keys=True, ensure_ascii=False),
                origin=event.origin,
            )
            self.place(use, [event.origin])
            self.pending.append((use, index))
        elif index not in self.taken:
            self.flush(index)
            if index not in self.taken:
                self.add_user_side(event)

    def add_user_side(self, event: _Event) -> None:
        """A system message, a user's, or a result no call of the round took (as user text)."""
        if event.kind == "system":
            if not event.content:
                return
            self.messages.append(Message("system"))
            content: Sequence[Content] = event.content
        else:
            self.open_message("user")
            content = event.content if event.kind == "user" else _texts(event.orphan_text, event.origin)
        for part in content:
            self.place(part, [event.origin])

    def flush(self, at_index: int) -> None:
        """Answer every call of the open assistant message at the head of a user message."""
        if not self.pending:
            return
        run = set()
        k = at_index
        while k < len(self.events) and self.events[k].kind == "result":
            run.add(k)
            k += 1
        self.messages.append(Message("user"))
        for use, at in self.pending:
            candidates = [j for j in self.owners.get(at, []) if j not in self.taken]
            mine = [j for j in candidates if j in run] or [j for j in candidates if j >= at_index][:1]
            self.taken.update(mine)
            result = self.answer(use, at, [self.events[j] for j in mine])
            self.place(result, result.origins)
        self.pending.clear()

    def answer(self, use: ToolUse, at: int, results: Sequence[_Event]) -> ToolResult:
        """The result of the call ``use`` (event ``at``): its result events, or a synthetic error."""
        if results:
            content = tuple(c for r in results for c in r.content) or (Text(EMPTY_RESULT),)
            return ToolResult(
                id=use.id,
                content=content,
                is_error=any(r.is_error for r in results),
                origins=tuple(r.origin for r in results),
            )
        missing = MISSING_RESULT.format(call_id=self.events[at].call_id or use.id)
        return ToolResult(id=use.id, content=(Text(missing),), is_error=True, synthetic=True)


def build_conversation(events: Sequence[_Event]) -> Conversation:
    """Alternating messages with every call answered at the head of the next user message.

    The results of a round are the run of result events where the round ends; a call with none
    there takes its first result stored later (a late result); any other result event renders as
    user text where it is stored. So appending blocks never changes an earlier message, except
    the one whose call was answered by a synthetic result until its real result arrived.
    """
    builder = _Builder(events)
    for index, event in enumerate(events):
        builder.add(index, event)
    builder.flush(len(events))
    return Conversation(messages=builder.messages, positions=builder.positions)


def stream_conversation(
    stable: Sequence[Block], tail: Sequence[str] = (), *, provider: str = ""
) -> Conversation:
    """The stable blocks, then the tail texts (sources pool, announce) as user text at the end;
    the thinking blocks of ``provider`` in place, nobody else's."""
    events: list[_Event] = []
    for index, block in enumerate(stable):
        events.extend(block_events(block, index, provider=provider))
    for text in tail:
        if text.strip():
            events.append(_Event("user", -1, (Text(text),)))
    return build_conversation(events)
