"""``gemini_contents``: ``contents`` + ``config`` for ``client.models.generate_content`` (pure).

Gemini's request: ``contents``, a list of ``Content`` (``role`` ``user`` or ``model``, ``parts``),
and ``config.system_instruction`` for the system prompt. The conversation maps as:

* user content → a ``user`` content of ``text`` / ``inline_data`` parts (images and PDFs as base64;
  other binaries and image URLs as their placeholder text);
* assistant text → ``text`` parts of a ``model`` content; a tool call → a ``function_call`` part
  (``id``, ``name``, ``args``);
* its results → ``function_response`` parts (same ``id`` and ``name``; ``response`` ``{"output":
  text}``, or ``{"error": text}`` for a failed call or a synthetic missing result) first in the
  very next ``user`` content, then the results' images and PDFs as ``inline_data`` parts;
* system texts (the request's and a named context's system messages) → ``config.system_instruction``.

Contents merge by role so they alternate, starting with ``user`` (a window that starts with the
model's text gets a ``[conversation continues]`` user text first). Tool names are the shared
mapping (``tool_names.provider_tool_name``) made to start with a letter or ``_`` as Gemini wants
(:func:`tool_names.gemini_tool_name`).

Thinking blocks of provider ``google`` come back as they were: a ``thought`` block as a part
``{"text", "thought": true, "thought_signature"?}``, a ``signature`` block as the
``thought_signature`` of the part rendered from the block after it in its model content (the
``function_call`` of a hidden call, not its replacement text); a signature with no part after it
there is left out. Implicit caching needs no marker: ``cache_points`` is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .conversation import CONTINUES_TEXT
from .entries import Content, Conversation, Entry, Media, Text, Thinking, ToolResult, ToolUse
from .tool_names import gemini_tool_name

# Media types Gemini takes as inline data (images and PDF documents).
GEMINI_INLINE_MIMES = frozenset(
    {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "application/pdf"}
)


def _content_part(part: Content) -> dict[str, Any]:
    if isinstance(part, Media):
        if part.data and part.mime in GEMINI_INLINE_MIMES:
            return {"inline_data": {"mime_type": part.mime, "data": part.data}}
        return {"text": part.placeholder}
    return {"text": part.text}


def _response(result: ToolResult) -> dict[str, Any]:
    text = "\n\n".join(c.text if isinstance(c, Text) else c.placeholder for c in result.content)
    return {"error" if result.is_error else "output": text}


def _origins(entry: Entry) -> tuple[int, ...]:
    if isinstance(entry, ToolResult):
        return entry.origins
    return (entry.origin,) if entry.origin >= 0 else ()


@dataclass(frozen=True)
class GeminiRender:
    request: dict[str, Any]
    # For each stable block index, the index of the content its (last) part landed in.
    content_of: dict[int, int]


def _model_parts(entries: list[Entry]) -> list[tuple[dict[str, Any], tuple[int, ...]]]:
    """A model content's parts, each signature on the part that carried it."""
    parts: list[tuple[dict[str, Any], tuple[int, ...]]] = []
    signature: str | None = None
    for at, entry in enumerate(entries):
        if isinstance(entry, Thinking):
            native = dict(entry.native)
            if native.get("thought"):
                parts.append((native, _origins(entry)))
            elif isinstance(native.get("thought_signature"), str):
                signature = native["thought_signature"]
            continue
        if isinstance(entry, ToolUse):
            part: dict[str, Any] = {
                "function_call": {"id": entry.id, "name": gemini_tool_name(entry.name), "args": entry.input}
            }
        elif isinstance(entry, (Text, Media)):
            part = _content_part(entry)
            following = entries[at + 1] if at + 1 < len(entries) else None
            # A hidden call renders its replacement text, then its call: the call keeps the signature.
            if (
                signature is not None
                and isinstance(following, ToolUse)
                and following.origin == entry.origin >= 0
            ):
                parts.append((part, _origins(entry)))
                continue
        else:
            continue
        if signature is not None:
            part["thought_signature"] = signature
            signature = None
        parts.append((part, _origins(entry)))
    return parts


def _user_parts(entries: list[Entry], names: dict[str, str]) -> list[tuple[dict[str, Any], tuple[int, ...]]]:
    """A user content's parts: the function responses first, their media, then the rest."""
    responses: list[tuple[dict[str, Any], tuple[int, ...]]] = []
    media: list[tuple[dict[str, Any], tuple[int, ...]]] = []
    rest: list[tuple[dict[str, Any], tuple[int, ...]]] = []
    for entry in entries:
        if isinstance(entry, ToolResult):
            response = {"id": entry.id, "name": names.get(entry.id, ""), "response": _response(entry)}
            responses.append(({"function_response": response}, _origins(entry)))
            for content in entry.content:
                if isinstance(content, Media) and content.data and content.mime in GEMINI_INLINE_MIMES:
                    media.append((_content_part(content), ()))
        elif isinstance(entry, (Text, Media)):
            rest.append((_content_part(entry), _origins(entry)))
    return [*responses, *media, *rest]


def gemini_request(conversation: Conversation, *, system_text: str) -> GeminiRender:
    """``{"contents": […], "config": {"system_instruction"?: …}}``: the keyword arguments of
    ``client.models.generate_content`` besides ``model``."""
    system: list[dict[str, Any]] = [{"text": system_text}] if system_text.strip() else []
    names = {
        entry.id: gemini_tool_name(entry.name)
        for message in conversation.messages
        for entry in message.content
        if isinstance(entry, ToolUse)
    }
    merged: list[tuple[str, list[Entry]]] = []
    for message in conversation.messages:
        if message.role == "system":
            system.extend({"text": e.text} for e in message.content if isinstance(e, Text))
            continue
        role = "model" if message.role == "assistant" else "user"
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(message.content)
        else:
            merged.append((role, list(message.content)))
    contents: list[dict[str, Any]] = []
    content_of: dict[int, int] = {}
    if merged and merged[0][0] == "model":
        contents.append({"role": "user", "parts": [{"text": CONTINUES_TEXT}]})
    for role, entries in merged:
        parts = _model_parts(entries) if role == "model" else _user_parts(entries, names)
        if not parts:
            # Only signatures with nothing after them: the model content says nothing.
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(part for part, _ in parts)
        else:
            contents.append({"role": role, "parts": [part for part, _ in parts]})
        for _, origins in parts:
            for origin in origins:
                content_of[origin] = len(contents) - 1
    config: dict[str, Any] = {}
    if system:
        config["system_instruction"] = {"parts": system}
    return GeminiRender(request={"contents": contents, "config": config}, content_of=content_of)
