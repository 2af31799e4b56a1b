"""The rules of the providers' request formats that their SDK types cannot state (pure).

Each function returns the violations it finds (empty: valid). The shapes themselves are checked
against the SDKs' own request types in the tests and in ``manage.py bench formats``.

* Anthropic: roles alternate starting with ``user``; no empty content or text; every ``tool_use``
  is answered in the very next user message, whose ``tool_result`` blocks come first and answer
  exactly that message's calls; no ``tool_result`` anywhere else; tool-use ids unique and of
  ``[A-Za-z0-9_-]``; tool names of ``[A-Za-z0-9_-]{1,64}``; at most 4 ``cache_control`` (system
  included), 1-hour ones before 5-minute ones; ``thinking`` (non-empty ``signature``) and
  ``redacted_thinking`` (non-empty ``data``) only in assistant messages, before any other block of
  theirs, never with ``cache_control``.
* OpenAI Responses: every ``function_call`` has exactly one ``function_call_output`` after it and
  before the next user or system message; no output without its call; unique ids; names; a
  ``reasoning`` item (``id``, ``summary`` list) is followed, after any other reasoning items, by a
  function call or an assistant message.
* OpenAI Chat: an assistant message with ``tool_calls`` is followed by one ``tool`` message per
  call id before any other message; no other ``tool`` message; unique ids; names.
* Gemini: ``contents`` alternate ``user`` / ``model``, the first the user's; every part holds one
  thing (``text``, ``inline_data``, ``file_data``, ``function_call``, ``function_response``), no
  empty text (but a signed thought's); every ``function_call`` of a model content is answered by
  ``function_response`` parts with its ``name`` and ``id``, first in the very next user content,
  exactly those; no response anywhere else; call ids unique; names Gemini accepts (a letter or
  ``_`` first, then ``[A-Za-z0-9_.:-]``, at most 128); ``thought`` and ``thought_signature``
  (base64) only in model contents; ``system_instruction`` text parts only.
* Anthropic and Gemini: the last message is the user's (unless the render asked for ``prefill``).
* OpenAI cache breakpoints (GPT-5.6 and later, both formats): ``prompt_cache_breakpoint`` only on
  input content parts (user / system / developer message parts, Responses ``function_call_output``
  parts, Chat ``tool`` message parts), never on a function call, a reasoning item or the
  assistant's output; at most 80; ``prompt_cache_options`` with them and never beside the
  deprecated ``prompt_cache_retention``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .tool_names import GEMINI_NAME_PATTERN, ID_PATTERN, NAME_PATTERN

MAX_CACHE_CONTROLS = 4


@dataclass(frozen=True)
class _CallRules:
    """What a format accepts as a call's id and name, and the violations' wording (``{!r}``: the
    offending value)."""

    id_pattern: re.Pattern[str]
    bad_id: str
    repeated_id: str
    name_pattern: re.Pattern[str]
    bad_name: str


TOOL_RULES = _CallRules(
    ID_PATTERN,
    "tool id {!r} is not [A-Za-z0-9_-]+",
    "tool id {!r} is not unique",
    NAME_PATTERN,
    "tool name {!r} is not [A-Za-z0-9_-]{{1,64}}",
)
GEMINI_RULES = _CallRules(
    re.compile(r".", re.DOTALL),  # any non-empty id
    "function_call without its id",
    "function_call id {!r} is not unique",
    GEMINI_NAME_PATTERN,
    "function name {!r} is not one Gemini accepts",
)


def _check_id_and_name(
    call_id: Any, name: Any, seen: set[str], where: str, out: list[str], rules: _CallRules = TOOL_RULES
) -> None:
    if not isinstance(call_id, str) or not rules.id_pattern.match(call_id):
        out.append(f"{where}: " + rules.bad_id.format(call_id))
    elif call_id in seen:
        out.append(f"{where}: " + rules.repeated_id.format(call_id))
    else:
        seen.add(call_id)
    if not isinstance(name, str) or not rules.name_pattern.match(name):
        out.append(f"{where}: " + rules.bad_name.format(name))


def _objects(items: Sequence[Any], name: str, out: list[str]) -> Iterator[tuple[int, str, Mapping[str, Any]]]:
    """``(index, where, item)`` for each object of ``items``; anything else is a violation in
    ``out``."""
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if isinstance(item, Mapping):
            yield i, where, item
        else:
            out.append(f"{where}: not an object")


def _cache_controls(blocks: Iterable[Any]) -> list[str]:
    ttls: list[str] = []
    for block in blocks:
        if isinstance(block, Mapping) and isinstance(block.get("cache_control"), Mapping):
            ttls.append(str(block["cache_control"].get("ttl", "5m")))
    return ttls


def _ends_with_user(items: Sequence[Any], *, prefill: bool) -> list[str]:
    if not items:
        return ["no message: the request needs at least the user's"]
    last = items[-1]
    if not prefill and not (isinstance(last, Mapping) and last.get("role") == "user"):
        return ["the last message is not the user's (the model does not take a prefill)"]
    return []


def anthropic_violations(request: Mapping[str, Any], *, prefill: bool = False) -> list[str]:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return ["messages is not a list"]
    out = _ends_with_user(messages, prefill=prefill)
    system = request.get("system", [])
    system_blocks = system if isinstance(system, list) else []
    for k, block in enumerate(system_blocks):
        if not (isinstance(block, Mapping) and block.get("type") == "text" and block.get("text")):
            out.append(f"system[{k}]: not a non-empty text block")
    ttls = _cache_controls(system_blocks)
    seen: set[str] = set()
    expected: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        where = f"messages[{i}]"
        want = "user" if i % 2 == 0 else "assistant"
        if role != want:
            out.append(f"{where}: role {role!r}, expected {want!r} (alternation, first user)")
        if not isinstance(content, list) or not content:
            out.append(f"{where}: empty content")
            expected = []
            continue
        ttls.extend(_cache_controls(content))
        results: list[str] = []
        results_done = False
        thinking_done = False
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, Mapping) else None
            at = f"{where}.content[{j}]"
            if kind in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    out.append(f"{at}: {kind} outside an assistant message")
                if thinking_done:
                    out.append(f"{at}: {kind} after other content of its message")
                if "cache_control" in block:
                    out.append(f"{at}: cache_control on a {kind} block")
                payload = "signature" if kind == "thinking" else "data"
                if not isinstance(block.get(payload), str) or not block.get(payload):
                    out.append(f"{at}: {kind} without its {payload}")
            else:
                thinking_done = True
            if kind == "text" and not block.get("text"):
                out.append(f"{at}: empty text")
            if kind == "tool_result":
                if role != "user":
                    out.append(f"{at}: tool_result outside a user message")
                if results_done:
                    out.append(f"{at}: tool_result after other content")
                results.append(str(block.get("tool_use_id")))
                for k, inner in enumerate(block.get("content") or []):
                    if isinstance(inner, Mapping) and inner.get("type") == "text" and not inner.get("text"):
                        out.append(f"{at}.content[{k}]: empty text")
            else:
                results_done = True
            if kind == "tool_use":
                if role != "assistant":
                    out.append(f"{at}: tool_use outside an assistant message")
                _check_id_and_name(block.get("id"), block.get("name"), seen, at, out)
                if not isinstance(block.get("input"), Mapping):
                    out.append(f"{at}: tool_use input is not an object")
        if role == "user":
            if sorted(results) != sorted(expected) or len(set(results)) != len(results):
                out.append(f"{where}: tool_result ids {results} do not answer the calls {expected}")
            expected = []
        else:
            if expected:
                out.append(f"{where}: calls {expected} not answered before this message")
            expected = [
                str(b.get("id")) for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"
            ]
    if expected:
        out.append(f"calls {expected} never answered")
    if len(ttls) > MAX_CACHE_CONTROLS:
        out.append(f"{len(ttls)} cache_control markers (at most {MAX_CACHE_CONTROLS})")
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        out.append("a 1-hour cache_control after a 5-minute one")
    return out


def _is_reasoning(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "reasoning"


def responses_violations(items: Sequence[Any]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    open_calls: list[str] = []
    answered: set[str] = set()
    for i, where, item in _objects(items, "input", out):
        kind = item.get("type")
        if kind == "reasoning":
            if not isinstance(item.get("id"), str) or not item.get("id"):
                out.append(f"{where}: reasoning item without its id")
            if not isinstance(item.get("summary"), list):
                out.append(f"{where}: reasoning item without its summary list")
            k = i + 1
            while k < len(items) and _is_reasoning(items[k]):
                k += 1
            following = items[k] if k < len(items) else None
            if not (
                isinstance(following, Mapping)
                and (following.get("type") == "function_call" or following.get("role") == "assistant")
            ):
                out.append(
                    f"{where}: reasoning item without its following function call or assistant message"
                )
            continue
        if kind == "function_call":
            _check_id_and_name(item.get("call_id"), item.get("name"), seen, where, out)
            open_calls.append(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in open_calls:
                state = "answered twice" if call_id in answered else "without its call before it"
                out.append(f"{where}: output for {call_id!r} {state}")
            else:
                open_calls.remove(call_id)
                answered.add(call_id)
        else:
            role = item.get("role")
            content = item.get("content")
            if not content:
                out.append(f"{where}: empty content")
            if role in ("user", "system", "developer") and open_calls:
                out.append(f"{where}: {role} message before the outputs of {open_calls}")
                open_calls.clear()
    if open_calls:
        out.append(f"calls {open_calls} never answered")
    return out


def chat_violations(messages: Sequence[Any]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    waiting: list[str] = []
    for _, where, message in _objects(messages, "messages", out):
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in waiting:
                out.append(f"{where}: tool message for {call_id!r} does not answer the assistant before it")
            else:
                waiting.remove(call_id)
            continue
        if waiting:
            out.append(f"{where}: {role} message before the tool messages of {waiting}")
            waiting = []
        calls = message.get("tool_calls") or []
        if role == "assistant":
            if not calls and not message.get("content"):
                out.append(f"{where}: assistant message without content or tool calls")
            for k, call in enumerate(calls):
                function = call.get("function") or {}
                _check_id_and_name(
                    call.get("id"), function.get("name"), seen, f"{where}.tool_calls[{k}]", out
                )
                waiting.append(str(call.get("id")))
        elif not message.get("content"):
            out.append(f"{where}: empty content")
    if waiting:
        out.append(f"calls {waiting} never answered")
    return out


_GEMINI_DATA = ("text", "inline_data", "file_data", "function_call", "function_response")


def _is_base64(value: Any) -> bool:
    if not isinstance(value, str) or not value:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _gemini_part(part: Any, role: Any, at: str, seen: set[str], out: list[str]) -> str:
    """Check one part; return which data field it holds."""
    if not isinstance(part, Mapping):
        out.append(f"{at}: not an object")
        return ""
    held = [key for key in _GEMINI_DATA if key in part]
    if len(held) != 1:
        out.append(f"{at}: holds {held or 'nothing'}, expected exactly one of {list(_GEMINI_DATA)}")
        return held[0] if held else ""
    kind = held[0]
    signed = "thought_signature" in part
    if signed and not _is_base64(part["thought_signature"]):
        out.append(f"{at}: thought_signature is not base64")
    if (signed or part.get("thought")) and role != "model":
        out.append(f"{at}: a thought or thought_signature outside a model content")
    if kind == "text" and not part["text"] and not (part.get("thought") and signed):
        out.append(f"{at}: empty text")
    if kind == "inline_data":
        data = part["inline_data"]
        if not (isinstance(data, Mapping) and data.get("mime_type") and _is_base64(data.get("data"))):
            out.append(f"{at}: inline_data without its mime_type and base64 data")
    if kind == "function_call":
        call = part["function_call"]
        if role != "model":
            out.append(f"{at}: function_call outside a model content")
        _check_id_and_name(call.get("id"), call.get("name"), seen, at, out, GEMINI_RULES)
        if not isinstance(call.get("args"), Mapping):
            out.append(f"{at}: function_call args is not an object")
    if kind == "function_response":
        response = part["function_response"]
        if role != "user":
            out.append(f"{at}: function_response outside a user content")
        if not isinstance(response.get("response"), Mapping):
            out.append(f"{at}: function_response response is not an object")
    return kind


def gemini_violations(request: Mapping[str, Any], *, prefill: bool = False) -> list[str]:
    contents = request.get("contents")
    if not isinstance(contents, list):
        return ["contents is not a list"]
    out = _ends_with_user(contents, prefill=prefill)
    config = request.get("config") or {}
    system = config.get("system_instruction") if isinstance(config, Mapping) else None
    if system is not None:
        parts = system.get("parts") if isinstance(system, Mapping) else None
        if not isinstance(parts, list) or not all(
            isinstance(p, Mapping) and set(p) == {"text"} and p["text"] for p in parts
        ):
            out.append("config.system_instruction: not a content of non-empty text parts")
    seen: set[str] = set()
    expected: list[tuple[str, str]] = []
    for i, where, content in _objects(contents, "contents", out):
        role = content.get("role")
        want = "user" if i % 2 == 0 else "model"
        if role != want:
            out.append(f"{where}: role {role!r}, expected {want!r} (alternation, first user)")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            out.append(f"{where}: no parts")
            parts = []
        answered: list[tuple[str, str]] = []
        responses_done = False
        calls: list[tuple[str, str]] = []
        for j, part in enumerate(parts):
            at = f"{where}.parts[{j}]"
            kind = _gemini_part(part, role, at, seen, out)
            if kind == "function_response":
                if responses_done:
                    out.append(f"{at}: function_response after other parts")
                response = part["function_response"]
                answered.append((str(response.get("id")), str(response.get("name"))))
            else:
                responses_done = True
            if kind == "function_call":
                call = part["function_call"]
                calls.append((str(call.get("id")), str(call.get("name"))))
        if role == "user":
            if sorted(answered) != sorted(expected) or len(set(answered)) != len(answered):
                out.append(f"{where}: function responses {answered} do not answer the calls {expected}")
            expected = []
        else:
            if expected:
                out.append(f"{where}: calls {expected} not answered before this content")
            expected = calls
    if expected:
        out.append(f"calls {expected} never answered")
    return out


MAX_OPENAI_BREAKPOINTS = 80
BREAKPOINT = "prompt_cache_breakpoint"
INPUT_ROLES = frozenset({"user", "system", "developer"})


def _marked(value: Any) -> int:
    """Breakpoints anywhere inside ``value``."""
    if isinstance(value, Mapping):
        return int(BREAKPOINT in value) + sum(_marked(v) for k, v in value.items() if k != BREAKPOINT)
    if isinstance(value, list):
        return sum(_marked(v) for v in value)
    return 0


def openai_breakpoint_violations(request: Mapping[str, Any], items: Sequence[Any]) -> list[str]:
    out: list[str] = []
    total = 0
    for _, where, item in _objects(items, "items", out):
        placed = _marked(item)
        total += placed
        if not placed:
            continue
        role, kind = item.get("role"), item.get("type")
        parts = item.get("output") if kind == "function_call_output" else item.get("content")
        on_parts = (
            sum(1 for part in parts if isinstance(part, Mapping) and BREAKPOINT in part)
            if isinstance(parts, list)
            else 0
        )
        allowed = kind == "function_call_output" or role in INPUT_ROLES or role == "tool"
        if not allowed or placed != on_parts:
            out.append(f"{where}: prompt_cache_breakpoint outside an input content part")
    options = request.get("prompt_cache_options")
    if total > MAX_OPENAI_BREAKPOINTS:
        out.append(f"{total} prompt_cache_breakpoint markers (reads consider {MAX_OPENAI_BREAKPOINTS})")
    if total and not isinstance(options, Mapping):
        out.append("prompt_cache_breakpoint markers without prompt_cache_options")
    if options is not None and "prompt_cache_retention" in request:
        out.append("prompt_cache_options beside the deprecated prompt_cache_retention")
    return out


def violations(format: str, request: Mapping[str, Any], *, prefill: bool = False) -> list[str]:
    """The rule violations of one native render's request (``NativeRender.request``); ``prefill``:
    the render was asked to keep the model's message last."""
    if format == "anthropic_messages":
        return anthropic_violations(request, prefill=prefill)
    if format == "gemini_contents":
        return gemini_violations(request, prefill=prefill)
    if format == "openai_responses":
        items = request.get("input") or []
        return responses_violations(items) + openai_breakpoint_violations(request, items)
    if format == "openai_chat":
        items = request.get("messages") or []
        return chat_violations(items) + openai_breakpoint_violations(request, items)
    raise ValueError(f"not a native format: {format!r}")
