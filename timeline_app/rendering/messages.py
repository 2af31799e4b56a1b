"""OpenAI-format messages (seed 004) as blocks: strict validation, the message <-> block
mapping and the stored form. Pure: limits and the current time come in as arguments.

A named context is a timeline; each message is stored as one block:

=========== ===================== ========= ==========================================
role        block type            author    notes
=========== ===================== ========= ==========================================
user        ``message.user``      user      a cut point and a turn start
assistant   ``message.assistant`` assistant a cut point (with ``tool_calls`` too)
tool        ``react.tool.result`` tool      never a cut point: never the first retained
system      ``message.system``    system    not a cut point
=========== ===================== ========= ==========================================

``meta.openai_message`` holds the message exactly as given (without ``timestamp`` and
``message_id``), ``meta.message_id`` and ``meta.timestamp`` the added fields, ``meta.tool_call_id``
the call a tool message answers (an assistant message: its first call, which groups the call
and its results into one cache round) and ``meta.tool_call_ids`` all calls of an assistant
message. The block's client id is ``msg:<message_id>``, so sending a message again stores
nothing new. Blocks carry no turn id: TTL pruning never hides a message (a hidden message
would break the OpenAI rendering of a tool pair).
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from timeline_app.errors import InvalidInput
from timeline_app.rendering import blocks as b
from timeline_app.rendering.contributions import NewBlock
from timeline_app.rendering.times import normalize_timestamp

MESSAGE_TYPES: dict[str, str] = {
    "user": "message.user",
    "assistant": "message.assistant",
    "system": "message.system",
    "tool": b.TOOL_RESULT,
}
MESSAGE_BLOCK_TYPES = frozenset(MESSAGE_TYPES.values())
CLIENT_ID_PREFIX = "msg:"
MESSAGE_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,119}$")
CONTEXT_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
LABEL_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,55}$")
ADDED_FIELDS = ("timestamp", "message_id")
MAX_NAME_CHARS = 256
MAX_ID_CHARS = 512

_ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "user": frozenset({"role", "content", "name"}),
    "system": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "name", "tool_calls", "refusal"}),
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
}
_PART_TYPES: dict[str, tuple[str, ...]] = {
    "user": ("text", "image_url", "input_audio", "file"),
    "system": ("text",),
    "assistant": ("text", "refusal"),
    "tool": ("text",),
}


# ---------------------------------------------------------------- validation


class _Errors:
    def __init__(self, *, data_limit: int) -> None:
        self.details: dict[str, str] = {}
        self.data_limit = data_limit

    def add(self, where: str, message: str) -> None:
        self.details.setdefault(where, message)

    def __bool__(self) -> bool:
        return bool(self.details)


def _data_limit(max_attachment_bytes: int) -> int:
    """Longest base64 text of one payload (image data URL, audio, file) in a message."""
    return math.ceil(max_attachment_bytes / 3) * 4 + 256


def _check_storable(value: Any, where: str, errors: _Errors) -> None:
    """Every string (keys too) must be storable: no NUL character, no lone surrogate."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        texts: list[str] = []
        if isinstance(item, str):
            texts = [item]
        elif isinstance(item, dict):
            texts = [k for k in item if isinstance(k, str)]
            stack.extend((v, f"{at}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))
        for text in texts:
            if "\x00" in text:
                errors.add(at, "text may not contain the NUL character")
            else:
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    errors.add(at, "text is not valid Unicode (lone surrogate)")


def _exact_keys(value: dict[str, Any], allowed: Iterable[str], where: str, errors: _Errors) -> None:
    for key in sorted(set(value) - set(allowed), key=str):
        errors.add(f"{where}.{key}", "unknown field")


def _check_part(part: Any, where: str, allowed: tuple[str, ...], errors: _Errors) -> None:
    if not isinstance(part, dict):
        errors.add(where, "a content part is an object")
        return
    kind = part.get("type")
    if kind not in allowed:
        errors.add(f"{where}.type", f"must be one of {', '.join(allowed)}")
        return
    _exact_keys(part, ("type", kind), where, errors)
    if kind not in part:
        errors.add(f"{where}.{kind}", "required")
        return
    body = part[kind]
    if kind in ("text", "refusal"):
        if not isinstance(body, str):
            errors.add(f"{where}.{kind}", "must be a string")
        return
    if not isinstance(body, dict):
        errors.add(f"{where}.{kind}", "must be an object")
        return
    inner = f"{where}.{kind}"
    if kind == "image_url":
        _exact_keys(body, ("url", "detail"), inner, errors)
        if not isinstance(body.get("url"), str) or not body["url"]:
            errors.add(f"{inner}.url", "required: a non-empty string")
        elif len(body["url"]) > errors.data_limit:
            errors.add(f"{inner}.url", "image over the attachment size limit")
        if "detail" in body and body["detail"] not in ("auto", "low", "high"):
            errors.add(f"{inner}.detail", "must be auto, low or high")
    elif kind == "input_audio":
        _exact_keys(body, ("data", "format"), inner, errors)
        if not isinstance(body.get("data"), str):
            errors.add(f"{inner}.data", "required: base64 audio as a string")
        elif len(body["data"]) > errors.data_limit:
            errors.add(f"{inner}.data", "audio over the attachment size limit")
        if body.get("format") not in ("wav", "mp3"):
            errors.add(f"{inner}.format", "must be wav or mp3")
    elif kind == "file":
        _exact_keys(body, ("file_data", "file_id", "filename"), inner, errors)
        for key in ("file_data", "file_id", "filename"):
            if key in body and not isinstance(body[key], str):
                errors.add(f"{inner}.{key}", "must be a string")
        if "file_data" not in body and "file_id" not in body:
            errors.add(inner, "needs file_data or file_id")
        if isinstance(body.get("file_data"), str) and len(body["file_data"]) > errors.data_limit:
            errors.add(f"{inner}.file_data", "file over the attachment size limit")


def _check_content(message: dict[str, Any], role: str, where: str, errors: _Errors) -> None:
    content = message.get("content")
    if isinstance(content, str):
        return
    if isinstance(content, list):
        if not content:
            errors.add(f"{where}.content", "a list of content parts may not be empty")
        for i, part in enumerate(content):
            _check_part(part, f"{where}.content[{i}]", _PART_TYPES[role], errors)
        return
    if content is None and role == "assistant":
        return
    errors.add(f"{where}.content", "must be a string or a list of content parts")


def _check_tool_calls(calls: Any, where: str, errors: _Errors) -> None:
    if not isinstance(calls, list) or not calls:
        errors.add(where, "must be a non-empty list")
        return
    seen: set[str] = set()
    for i, call in enumerate(calls):
        at = f"{where}[{i}]"
        if not isinstance(call, dict):
            errors.add(at, "a tool call is an object")
            continue
        _exact_keys(call, ("id", "type", "function"), at, errors)
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_ID_CHARS:
            errors.add(f"{at}.id", f"required: a non-empty string of at most {MAX_ID_CHARS} characters")
        elif call_id in seen:
            errors.add(f"{at}.id", "the same tool call id appears twice in one message")
        else:
            seen.add(call_id)
        if call.get("type") != "function":
            errors.add(f"{at}.type", "must be 'function'")
        function = call.get("function")
        if not isinstance(function, dict):
            errors.add(f"{at}.function", "required: {name, arguments}")
            continue
        _exact_keys(function, ("name", "arguments"), f"{at}.function", errors)
        name = function.get("name")
        if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS:
            errors.add(f"{at}.function.name", "required: a non-empty string")
        if not isinstance(function.get("arguments"), str):
            errors.add(f"{at}.function.arguments", "required: the arguments as a JSON string")


def _check_message(message: Any, where: str, errors: _Errors) -> None:
    if not isinstance(message, dict):
        errors.add(where, "a message is an object")
        return
    role = message.get("role")
    if role not in _ALLOWED_KEYS:
        errors.add(f"{where}.role", "must be one of user, assistant, tool, system")
        return
    _exact_keys(message, _ALLOWED_KEYS[role] | set(ADDED_FIELDS), where, errors)
    if "content" not in message and role != "assistant":
        errors.add(f"{where}.content", "required")
    else:
        _check_content(message, role, where, errors)
    if "name" in message and (
        not isinstance(message["name"], str) or not message["name"] or len(message["name"]) > MAX_NAME_CHARS
    ):
        errors.add(f"{where}.name", f"must be a non-empty string of at most {MAX_NAME_CHARS} characters")
    if role == "assistant":
        if "tool_calls" in message:
            _check_tool_calls(message["tool_calls"], f"{where}.tool_calls", errors)
        refusal = message.get("refusal")
        if refusal is not None and not isinstance(refusal, str):
            errors.add(f"{where}.refusal", "must be a string or null")
        if message.get("content") is None and "tool_calls" not in message and not isinstance(refusal, str):
            errors.add(f"{where}.content", "an assistant message needs content, tool_calls or refusal")
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_ID_CHARS:
            errors.add(f"{where}.tool_call_id", "required: the id of the tool call this result answers")
    _check_storable(message, where, errors)


@dataclass(frozen=True)
class NewMessage:
    """A validated message: the OpenAI message as given, and its id and time."""

    message: dict[str, Any]
    message_id: str
    timestamp: str


def parse_messages(
    raw: Any, *, now_iso: str, max_messages: int, max_text_chars: int, max_attachment_bytes: int
) -> list[NewMessage]:
    """Validate a list of OpenAI chat messages strictly; raise InvalidInput naming every problem.

    A message may carry ``message_id`` (kept: sending it again stores nothing new) and
    ``timestamp`` (ISO-8601, normalised to UTC); otherwise a uuid4 and the server time are added.
    """
    limit = max_messages
    if not isinstance(raw, list) or not raw:
        raise InvalidInput("messages must be a non-empty list", details={"messages": "a non-empty list"})
    if len(raw) > limit:
        raise InvalidInput(f"at most {limit} messages per request", details={"messages": f"at most {limit}"})
    errors = _Errors(data_limit=_data_limit(max_attachment_bytes))
    stamp = now_iso
    parsed: list[NewMessage] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        where = f"messages[{i}]"
        before = len(errors.details)
        _check_message(item, where, errors)
        if not isinstance(item, dict):
            continue
        message_id = item.get("message_id")
        if message_id is None:
            message_id = str(uuid.uuid4())
        elif not isinstance(message_id, str) or not MESSAGE_ID_PATTERN.match(message_id):
            errors.add(f"{where}.message_id", f"must match {MESSAGE_ID_PATTERN.pattern}")
            continue
        elif message_id in seen:
            errors.add(f"{where}.message_id", "the same message_id appears twice in one request")
        seen.add(message_id)
        timestamp = stamp
        if item.get("timestamp") is not None:
            try:
                if not isinstance(item["timestamp"], str):
                    raise TypeError
                timestamp = normalize_timestamp(item["timestamp"])
            except (TypeError, ValueError, OverflowError):
                errors.add(f"{where}.timestamp", "must be an ISO-8601 time")
                continue
        message = {k: v for k, v in item.items() if k not in ADDED_FIELDS}
        text_limit = max_text_chars
        if len(errors.details) == before and len(message_text(message)) > text_limit:
            errors.add(where, f"text over the limit of {text_limit} characters")
        parsed.append(NewMessage(message=message, message_id=message_id, timestamp=timestamp))
    if errors:
        raise InvalidInput("the messages are not valid OpenAI chat messages", details=errors.details)
    return parsed


# ---------------------------------------------------------------- messages as blocks


def _part_text(part: Mapping[str, Any]) -> str:
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "refusal":
        return f"[refusal] {part.get('refusal', '')}"
    if kind == "image_url":
        url = str(part.get("image_url", {}).get("url", ""))
        shown = url if not url.startswith("data:") else f"{url.split(',', 1)[0]}, {len(url)} chars"
        return f"[image: {shown}]"
    if kind == "input_audio":
        audio = part.get("input_audio", {})
        return f"[audio: {audio.get('format', '')}, {len(str(audio.get('data', '')))} chars]"
    if kind == "file":
        file = part.get("file", {})
        return f"[file: {file.get('filename') or file.get('file_id') or 'inline'}]"
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    """The block text of a message, as the anthropic and text formats show it."""
    lines: list[str] = []
    if message.get("role") == "tool":
        name = message.get("name")
        lines.append(f"[tool result {message.get('tool_call_id')}]" + (f" {name}" if name else ""))
    content = message.get("content")
    if isinstance(content, str) and content:
        lines.append(content)
    elif isinstance(content, list):
        lines.extend(_part_text(p) for p in content if isinstance(p, Mapping))
    if isinstance(message.get("refusal"), str):
        lines.append(f"[refusal] {message['refusal']}")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        lines.append(f"[tool call {call.get('id')}] {function.get('name')}({function.get('arguments')})")
    return "\n".join(lines)


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    return [c["id"] for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]


def message_block(new: NewMessage) -> NewBlock:
    role = new.message["role"]
    meta: dict[str, Any] = {
        "openai_message": new.message,
        "message_id": new.message_id,
        "timestamp": new.timestamp,
        "role": role,
    }
    if role == "tool":
        meta["tool_call_id"] = new.message["tool_call_id"]
    calls = _call_ids(new.message)
    if calls:
        meta["tool_call_id"] = calls[0]
        meta["tool_call_ids"] = calls
    return NewBlock(
        type=MESSAGE_TYPES[role],
        author=role,
        turn_id="",
        ts=new.timestamp,
        mime="text/plain",
        text=message_text(new.message),
        path=f"ar:msg.{new.message_id}",
        meta=meta,
        client_id=CLIENT_ID_PREFIX + new.message_id,
    )


@dataclass(frozen=True)
class StoredMessage:
    message: dict[str, Any]
    message_id: str
    timestamp: str
    seq: int

    def as_dict(self) -> dict[str, Any]:
        """The message as given, plus ``timestamp`` and ``message_id``."""
        return {**self.message, "timestamp": self.timestamp, "message_id": self.message_id}


def stored_message(seq: int, meta: Any) -> StoredMessage | None:
    if not isinstance(meta, dict):
        return None
    message, message_id, timestamp = meta.get("openai_message"), meta.get("message_id"), meta.get("timestamp")
    if not isinstance(message, dict) or not isinstance(message_id, str) or not isinstance(timestamp, str):
        return None
    return StoredMessage(message=message, message_id=message_id, timestamp=timestamp, seq=seq)


def _letters(n: int) -> str:
    """Bijective base 26: 1 → a, 26 → z, 27 → aa."""
    out = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def next_context_name(label: str, existing: Iterable[str]) -> str:
    """The first of ``label_a`` … ``label_z``, ``label_aa`` … not taken yet."""
    taken = set(existing)
    n = 1
    while f"{label}_{_letters(n)}" in taken:
        n += 1
    return f"{label}_{_letters(n)}"
