"""Strict validation of OpenAI chat messages (seed 004): every problem named in ``details``, every
string storable (no NUL, no lone surrogate), payloads within the attachment limit. Pure: limits and
the current time are arguments."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from typing import Any

from timeline_app.domain.messages import (
    ADDED_FIELDS,
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    MESSAGE_ID_PATTERN,
    MESSAGE_TYPES,
    NewMessage,
    message_text,
)
from timeline_app.domain.times import normalize_timestamp, parse_iso
from timeline_app.errors import InvalidInput

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


def _shown(key: Any) -> str:
    """A key as ``details`` may name it: a NUL or a lone surrogate is written as an escape."""
    text = str(key).replace("\x00", "\\x00")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
            stack.extend((v, f"{at}.{_shown(k)}" if at else _shown(k)) for k, v in item.items())
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


def storable_problems(value: Any, where: str = "") -> dict[str, str]:
    """Where ``value`` (any JSON value, keys included) holds a string the database cannot store:
    a NUL character or a lone surrogate. Empty when every string is storable.

    The one check behind every JSON input (the API's parser, query parameters, messages)."""
    errors = _Errors(data_limit=0)
    _check_storable(value, where, errors)
    return errors.details


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


def _check_message(message: Any, where: str, errors: _Errors, *, stored: bool = False) -> None:
    """``stored``: the form a block keeps in ``meta.openai_message``, whose id and time live in
    ``meta.message_id`` / ``meta.timestamp`` (the OpenAI format renders the message as stored)."""
    if not isinstance(message, dict):
        errors.add(where, "a message is an object")
        return
    role = message.get("role")
    if not isinstance(role, str) or role not in _ALLOWED_KEYS:  # a list or object is unhashable
        errors.add(f"{where}.role", "must be one of user, assistant, tool, system")
        return
    _exact_keys(message, _ALLOWED_KEYS[role] | (set() if stored else set(ADDED_FIELDS)), where, errors)
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


_CONTEXT_MESSAGE_TYPES = {t: role for role, t in MESSAGE_TYPES.items() if t.startswith("message.")}


def message_block_problems(
    type: str, meta: Any, *, where: str = "meta", max_attachment_bytes: int = 2**40
) -> dict[str, str]:
    """What is wrong with a block that the contexts read as a message, on any write path (blocks
    API, import): empty when nothing is.

    A ``message.user`` / ``message.assistant`` / ``message.system`` block must carry a valid
    ``meta.openai_message`` of that role with ``meta.message_id`` and ``meta.timestamp`` (what the
    messages API writes: branching and the full context copy it); any other block that carries
    ``meta.openai_message`` (the OpenAI format renders it as that message) must carry a valid one.
    """
    role_of_type = _CONTEXT_MESSAGE_TYPES.get(type)
    if role_of_type is None and not (isinstance(meta, dict) and "openai_message" in meta):
        return {}
    errors = _Errors(data_limit=_data_limit(max_attachment_bytes))
    message = meta.get("openai_message") if isinstance(meta, dict) else None
    if not isinstance(message, dict):
        errors.add(f"{where}.openai_message", f"required for a {type} block: the OpenAI message it stores")
        return errors.details
    _check_message(message, f"{where}.openai_message", errors, stored=True)
    if role_of_type is not None:
        assert isinstance(meta, dict)
        if message.get("role") != role_of_type:
            errors.add(f"{where}.openai_message.role", f"a {type} block stores a {role_of_type} message")
        message_id = meta.get("message_id")
        if not isinstance(message_id, str) or not MESSAGE_ID_PATTERN.match(message_id):
            errors.add(f"{where}.message_id", f"required: must match {MESSAGE_ID_PATTERN.pattern}")
        timestamp = meta.get("timestamp")
        try:
            if not isinstance(timestamp, str):
                raise ValueError
            parse_iso(timestamp)
        except ValueError:
            errors.add(f"{where}.timestamp", "required: an ISO-8601 time")
    return errors.details
