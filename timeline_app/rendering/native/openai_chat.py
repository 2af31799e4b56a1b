"""``openai_chat``: ``messages`` for ``client.chat.completions.create`` (pure).

User content → a ``user`` message of ``text`` / ``image_url`` / ``file`` parts; assistant text and
tool calls → one ``assistant`` message (``content`` the texts joined, ``tool_calls`` the calls);
its results → one ``tool`` message per call, right after it and before anything else; system texts
stay in place as ``system`` messages. Models before GPT-5.6 take no cache markers (the caller adds
``prompt_cache_key``); for GPT-5.6 and later (``explicit``) a ``tool`` message's content is a list
of text parts, so that it can carry a ``prompt_cache_breakpoint`` like the user's content parts.
"""

from __future__ import annotations

from typing import Any

from ..formats import OPENAI_FILE_MIMES, OPENAI_IMAGE_MIMES
from .entries import Content, Conversation, Media, Text, ToolResult, ToolUse
from .openai_responses import OpenAIItems, PartPath, result_output


def chat_part(part: Content) -> dict[str, Any]:
    if isinstance(part, Media):
        if part.kind == "image" and part.url:
            return {"type": "image_url", "image_url": {"url": part.url}}
        if part.kind == "image" and part.mime in OPENAI_IMAGE_MIMES and part.data:
            return {"type": "image_url", "image_url": {"url": f"data:{part.mime};base64,{part.data}"}}
        if part.kind == "document" and part.mime in OPENAI_FILE_MIMES and part.data:
            return {
                "type": "file",
                "file": {"filename": part.filename, "file_data": f"data:{part.mime};base64,{part.data}"},
            }
        return {"type": "text", "text": part.placeholder}
    return {"type": "text", "text": part.text}


def chat_messages(conversation: Conversation) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The chat ``messages``, and for each stable block index the index of its (last) message."""
    built = chat_items(conversation)
    return built.items, built.item_of


def chat_items(conversation: Conversation, *, explicit: bool = False) -> OpenAIItems:
    """The chat ``messages``; ``explicit``: tool outputs as text parts, markable parts noted."""
    out: list[dict[str, Any]] = []
    message_of: dict[int, int] = {}
    markable: dict[int, PartPath] = {}

    def note(origins: tuple[int, ...] | list[int]) -> None:
        for origin in origins:
            if origin >= 0:
                message_of[origin] = len(out) - 1

    for message in conversation.messages:
        if message.role == "assistant":
            texts = [e for e in message.content if isinstance(e, Text)]
            calls = [e for e in message.content if isinstance(e, ToolUse)]
            body: dict[str, Any] = {
                "role": "assistant",
                "content": "\n\n".join(t.text for t in texts) or None,
            }
            if calls:
                body["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ]
            out.append(body)
            note([t.origin for t in texts] + [c.origin for c in calls])
            continue
        if message.role == "system":
            text = "\n\n".join(e.text for e in message.content if isinstance(e, Text))
            out.append({"role": "system", "content": text})
            note([e.origin for e in message.content if isinstance(e, Text)])
            continue
        parts: list[dict[str, Any]] = []
        origins: list[int] = []
        for entry in message.content:
            if isinstance(entry, ToolResult):
                output = result_output(entry, rich=False) or "(empty result)"
                content: Any = [{"type": "text", "text": output}] if explicit else output
                out.append({"role": "tool", "tool_call_id": entry.id, "content": content})
                note(entry.origins)
                if explicit:
                    for origin in entry.origins:
                        markable[origin] = (len(out) - 1, "content", 0)
            elif isinstance(entry, (Text, Media)):
                parts.append(chat_part(entry))
                origins.append(entry.origin)
        if parts:
            out.append({"role": "user", "content": parts})
            note(origins)
            if explicit:
                for p, origin in enumerate(origins):
                    if origin >= 0:
                        markable[origin] = (len(out) - 1, "content", p)
    return OpenAIItems(out, message_of, markable)
