"""``openai_responses``: ``input`` items for ``client.responses.create`` (pure).

User content → a ``user`` message of ``input_text`` / ``input_image`` / ``input_file`` parts;
assistant text → an ``assistant`` message; a tool call → a ``function_call`` item (``arguments`` a
JSON string); its result → a ``function_call_output`` item right after the calls of its round;
system texts stay in place as ``system`` messages. Models before GPT-5.6 take no cache markers
(OpenAI caches prefixes by itself; the caller adds a stable ``prompt_cache_key``). For GPT-5.6 and
later (``explicit``) every result's ``output`` is a list of input parts, so that any of them can
carry a ``prompt_cache_breakpoint`` without changing the bytes before it; :class:`OpenAIItems`
says which parts can (``markable``: input content parts only, never a function call, a reasoning
item or the assistant's output).

A stored ``reasoning`` item (``react.thinking`` of provider ``openai``) comes back in place as
``{"type": "reasoning", "id", "summary", "encrypted_content"}``, when an item of its assistant
message follows it (a function call or the assistant's text): the API rejects a reasoning item
"provided without its required following item".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..formats import OPENAI_FILE_MIMES, OPENAI_IMAGE_MIMES
from .entries import Content, Conversation, Media, Text, Thinking, ToolResult, ToolUse


def input_part(part: Content) -> dict[str, Any]:
    if isinstance(part, Media):
        if part.kind == "image" and part.url:
            return {"type": "input_image", "image_url": part.url, "detail": "auto"}
        if part.kind == "image" and part.mime in OPENAI_IMAGE_MIMES and part.data:
            return {
                "type": "input_image",
                "image_url": f"data:{part.mime};base64,{part.data}",
                "detail": "auto",
            }
        if part.kind == "document" and part.mime in OPENAI_FILE_MIMES and part.data:
            return {
                "type": "input_file",
                "filename": part.filename,
                "file_data": f"data:{part.mime};base64,{part.data}",
            }
        return {"type": "input_text", "text": part.placeholder}
    return {"type": "input_text", "text": part.text}


def result_output(result: ToolResult, *, rich: bool) -> str | list[dict[str, Any]]:
    """A result's output: its text (``[error]`` first when it failed), or parts with media."""
    texts = [c.text for c in result.content if isinstance(c, Text)]
    prefix = "[error] " if result.is_error and not result.synthetic else ""
    if rich and any(isinstance(c, Media) for c in result.content):
        parts = [input_part(c) for c in result.content]
        if prefix:
            parts.insert(0, {"type": "input_text", "text": prefix.strip()})
        return parts
    shown = [c.text if isinstance(c, Text) else c.placeholder for c in result.content] if not rich else texts
    return prefix + "\n\n".join(shown)


# Where a marker can go: (item index, ``content`` or ``output``, part index).
PartPath = tuple[int, str, int]


@dataclass
class OpenAIItems:
    """The message list, for each stable block index its (last) item, and the last markable
    part of each stable block's content (``explicit`` renders only)."""

    items: list[dict[str, Any]]
    item_of: dict[int, int]
    markable: dict[int, PartPath] = field(default_factory=dict)


def responses_input(conversation: Conversation) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The ``input`` items, and for each stable block index the index of its (last) item."""
    built = responses_items(conversation)
    return built.items, built.item_of


def responses_items(conversation: Conversation, *, explicit: bool = False) -> OpenAIItems:
    """The ``input`` items; ``explicit``: results as input parts, markable parts noted."""
    items: list[dict[str, Any]] = []
    item_of: dict[int, int] = {}
    markable: dict[int, PartPath] = {}

    def note(origins: tuple[int, ...] | list[int]) -> None:
        for origin in origins:
            if origin >= 0:
                item_of[origin] = len(items) - 1

    def flush_texts(texts: list[Text]) -> None:
        if texts:
            items.append({"role": "assistant", "content": "\n\n".join(t.text for t in texts)})
            note([t.origin for t in texts])
            texts.clear()

    for message in conversation.messages:
        if message.role == "assistant":
            texts: list[Text] = []
            last_item = max(
                (k for k, e in enumerate(message.content) if isinstance(e, (Text, ToolUse))), default=-1
            )
            for at, entry in enumerate(message.content):
                if isinstance(entry, Thinking):
                    if at < last_item:
                        flush_texts(texts)
                        items.append(dict(entry.native))
                        note([entry.origin])
                elif isinstance(entry, ToolUse):
                    flush_texts(texts)
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": entry.id,
                            "name": entry.name,
                            "arguments": entry.arguments,
                        }
                    )
                    note([entry.origin])
                elif isinstance(entry, Text):
                    texts.append(entry)
            flush_texts(texts)
            continue
        parts: list[dict[str, Any]] = []
        origins: list[int] = []
        for entry in message.content:
            if isinstance(entry, ToolResult):
                output = result_output(entry, rich=True)
                if explicit and isinstance(output, str):
                    output = [{"type": "input_text", "text": output or "(empty result)"}]
                items.append({"type": "function_call_output", "call_id": entry.id, "output": output})
                note(entry.origins)
                if explicit:
                    for origin in entry.origins:
                        markable[origin] = (len(items) - 1, "output", len(output) - 1)
            elif isinstance(entry, (Text, Media)):
                parts.append(input_part(entry))
                origins.append(entry.origin)
        if parts:
            items.append({"role": message.role, "content": parts})
            note(origins)
            if explicit:
                for p, origin in enumerate(origins):
                    if origin >= 0:
                        markable[origin] = (len(items) - 1, "content", p)
    return OpenAIItems(items, item_of, markable)
