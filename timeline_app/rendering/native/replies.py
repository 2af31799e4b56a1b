"""A provider's reply, as its API answered it, read into the blocks an agent stores (pure).

Accepted (the JSON of the SDK objects; ``model_dump(mode="json")`` of them gives it):

* Anthropic ``Message`` (``"type": "message"``): ``content`` blocks ``thinking``,
  ``redacted_thinking``, ``text``, ``tool_use``; ``usage``.
* OpenAI ``Response`` (``"object": "response"``): ``output`` items ``reasoning``, ``message``
  (``output_text`` / ``refusal`` parts), ``function_call``; ``usage``.
* OpenAI ``ChatCompletion`` (``"object": "chat.completion"``): ``choices[0].message`` (``content``,
  ``refusal``, ``tool_calls``); ``usage``.
* Gemini ``GenerateContentResponse`` (``candidates``; camelCase as the API sends it or snake_case
  as the SDK dumps it): ``candidates[0].content.parts`` (``text``, ``thought``,
  ``thoughtSignature``, ``functionCall``); ``usageMetadata`` (read as ``POST …/usage/`` reads it:
  ``rendering/usage/reported.gemini_usage``).

The blocks, in the reply's order:

* thinking (Anthropic ``thinking`` / ``redacted_thinking``, an OpenAI ``reasoning`` item, a Gemini
  thought part or a thought signature on another part) → ``react.thinking`` with the provider's
  opaque data (``domain/thinking.py``): a Gemini thought → ``google`` / ``thought`` (its text, its
  signature), a signature carried by a call or text part → ``google`` / ``signature`` right before
  that part's block, so the ``gemini_contents`` render puts it back on that part (signatures as
  standard base64, whichever alphabet the reply used; one on an empty text part, which renders
  nothing, is not stored);
* text, when the reply calls tools → ``react.notes`` (author ``react``); when it calls none → the
  turn's ``assistant.completion`` (author ``assistant``; an empty reply stores one empty
  completion, so the turn is answered); a refusal is text too (``meta.refusal: true``);
* each tool call → ``react.tool.call`` (author ``react``): ``meta.tool_call_id`` the provider's
  id (Gemini calls without one get ``<response id>-call-<k>``), ``meta.tool_id`` and the text's
  ``tool_id`` the name mapped back to the declared one (``rendering/native/tool_names.py``: a name
  that is no mapped name is kept as the model sent it), ``params`` the arguments.

Every block's client id is ``reply:<response id>:<k>`` (a retry stores nothing twice) and its
``meta.reply`` the response id and the digest of the whole reply (another body under the same id
is a conflict).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock

from ..usage.reported import gemini_usage
from .tool_names import timeline_tool_name

ReplyFormat = Literal["anthropic", "openai_responses", "openai_chat", "gemini"]
MAX_RESPONSE_ID = 100


class ReplyError(ValueError):
    """A reply that is none of the accepted shapes, or a part of it malformed; ``field`` names it."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ToolCall:
    """A call the agent now has to run: the provider's id, the declared name, the arguments."""

    tool_call_id: str
    name: str
    provider_name: str
    input: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "provider_name": self.provider_name,
            "input": self.input,
        }


@dataclass(frozen=True)
class Reply:
    format: ReplyFormat
    response_id: str
    model: str
    usage: dict[str, Any] | None
    blocks: list[NewBlock] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)


# One part of a reply, provider-neutral: ("thinking", meta, text), ("text", text, refusal),
# ("call", id, name, input).
_Part = tuple[Any, ...]


def _get(value: Any, *names: str) -> Any:
    """The first of ``names`` present in a mapping (camelCase and snake_case spellings)."""
    if not isinstance(value, Mapping):
        return None
    for name in names:
        if name in value and value[name] is not None:
            return value[name]
    return None


def _str(value: Any, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ReplyError(f"{where} must be a string", where)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ReplyError(f"{where} must be a list", where)
    return value


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        raise ReplyError(f"{where} must be a JSON object or its text", where)
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ReplyError(f"{where} is no JSON: {exc}", where) from exc
    return value if isinstance(value, dict) else {"arguments": value}


def reply_format(response: Mapping[str, Any]) -> ReplyFormat:
    """Which provider's reply this is, by its own markers."""
    if response.get("type") == "message" and "content" in response:
        return "anthropic"
    if response.get("object") == "response" and "output" in response:
        return "openai_responses"
    if response.get("object") == "chat.completion" and "choices" in response:
        return "openai_chat"
    if "candidates" in response:
        return "gemini"
    raise ReplyError(
        "not a provider reply: expected an Anthropic Message (type message), an OpenAI Response "
        "(object response), a ChatCompletion (object chat.completion) or a Gemini "
        "GenerateContentResponse (candidates)",
        "response",
    )


def _anthropic_parts(response: Mapping[str, Any]) -> list[_Part]:
    parts: list[_Part] = []
    for k, block in enumerate(_list(response.get("content"), "response.content")):
        where = f"response.content[{k}]"
        kind = _get(block, "type")
        if kind == "thinking":
            meta = {"provider": "anthropic", "kind": "thinking", "signature": _get(block, "signature")}
            parts.append(("thinking", meta, _str(_get(block, "thinking") or "", f"{where}.thinking")))
        elif kind == "redacted_thinking":
            parts.append(
                ("thinking", {"provider": "anthropic", "kind": kind, "data": _get(block, "data")}, "")
            )
        elif kind == "text":
            parts.append(("text", _str(_get(block, "text") or "", f"{where}.text"), False))
        elif kind == "tool_use":
            parts.append(
                (
                    "call",
                    _str(_get(block, "id"), f"{where}.id"),
                    _str(_get(block, "name"), f"{where}.name"),
                    _arguments(_get(block, "input"), f"{where}.input"),
                )
            )
        # Server tool blocks (web search…) are the provider's own round: not the agent's to run.
    if response.get("stop_reason") == "refusal" and not any(p[0] == "text" for p in parts):
        parts.append(("text", "", True))
    return parts


def _responses_parts(response: Mapping[str, Any]) -> list[_Part]:
    parts: list[_Part] = []
    for k, item in enumerate(_list(response.get("output"), "response.output")):
        where = f"response.output[{k}]"
        kind = _get(item, "type")
        if kind == "reasoning":
            summary = [
                {"type": "summary_text", "text": _str(_get(s, "text"), f"{where}.summary[{j}].text")}
                for j, s in enumerate(_list(_get(item, "summary"), f"{where}.summary"))
            ]
            meta: dict[str, Any] = {
                "provider": "openai",
                "kind": "reasoning",
                "id": _get(item, "id"),
                "summary": summary,
            }
            if _get(item, "encrypted_content") is not None:
                meta["encrypted_content"] = _get(item, "encrypted_content")
            parts.append(("thinking", meta, ""))
        elif kind == "message":
            for j, content in enumerate(_list(_get(item, "content"), f"{where}.content")):
                ctype = _get(content, "type")
                if ctype == "output_text":
                    parts.append(
                        ("text", _str(_get(content, "text") or "", f"{where}.content[{j}].text"), False)
                    )
                elif ctype == "refusal":
                    parts.append(
                        ("text", _str(_get(content, "refusal") or "", f"{where}.content[{j}].refusal"), True)
                    )
        elif kind == "function_call":
            parts.append(
                (
                    "call",
                    _str(_get(item, "call_id"), f"{where}.call_id"),
                    _str(_get(item, "name"), f"{where}.name"),
                    _arguments(_get(item, "arguments"), f"{where}.arguments"),
                )
            )
    return parts


def _chat_parts(response: Mapping[str, Any]) -> list[_Part]:
    choices = _list(response.get("choices"), "response.choices")
    if not choices:
        raise ReplyError("a ChatCompletion without choices", "response.choices")
    message = _get(choices[0], "message")
    if not isinstance(message, Mapping):
        raise ReplyError("choices[0].message is required", "response.choices[0].message")
    where = "response.choices[0].message"
    parts: list[_Part] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(("text", content, False))
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(("text", refusal, True))
    for k, call in enumerate(_list(message.get("tool_calls"), f"{where}.tool_calls")):
        function = _get(call, "function")
        at = f"{where}.tool_calls[{k}]"
        if not isinstance(function, Mapping):
            continue  # a custom (non-function) tool call: not a tool the timeline declares
        parts.append(
            (
                "call",
                _str(_get(call, "id"), f"{at}.id"),
                _str(function.get("name"), f"{at}.function.name"),
                _arguments(function.get("arguments"), f"{at}.function.arguments"),
            )
        )
    return parts


def _signature(value: Any, where: str) -> str:
    """A thought signature as standard base64, as ``react.thinking`` keeps it: the API sends
    standard base64, the google-genai SDK's JSON dump URL-safe base64; both decode to the same bytes."""
    text = _str(value, where)
    try:
        raw = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ReplyError(f"{where} is not base64", where) from exc
    if not raw:
        raise ReplyError(f"{where} is empty", where)
    return base64.b64encode(raw).decode("ascii")


def _gemini_parts(response: Mapping[str, Any], response_id: str) -> list[_Part]:
    candidates = _list(response.get("candidates"), "response.candidates")
    content = _get(candidates[0], "content") if candidates else None
    parts: list[_Part] = []
    calls = 0
    for k, part in enumerate(_list(_get(content, "parts"), "response.candidates[0].content.parts")):
        where = f"response.candidates[0].content.parts[{k}]"
        raw_signature = _get(part, "thoughtSignature", "thought_signature")
        signature = None if raw_signature is None else _signature(raw_signature, f"{where}.thoughtSignature")
        if _get(part, "thought") is True:
            text = _str(_get(part, "text") or "", f"{where}.text")
            meta: dict[str, Any] = {"provider": "google", "kind": "thought"}
            if signature:
                meta["signature"] = signature
            if text or signature:  # an empty thought without a signature says nothing
                parts.append(("thinking", meta, text))
            continue
        call = _get(part, "functionCall", "function_call")
        text = _get(part, "text")
        # The signature goes back on the part rendered from the very next block: store it only
        # before a block that renders (a call, a text with something in it); Gemini requires it
        # on function calls alone, and on an empty closing text there is no part to carry it.
        renders = call is not None or (isinstance(text, str) and bool(text.strip()))
        if signature and renders:
            parts.append(
                ("thinking", {"provider": "google", "kind": "signature", "signature": signature}, "")
            )
        if call is not None:
            calls += 1
            call_id = _get(call, "id") or f"{response_id}-call-{calls}"
            parts.append(
                (
                    "call",
                    _str(call_id, f"{where}.functionCall.id"),
                    _str(_get(call, "name"), f"{where}.functionCall.name"),
                    _arguments(_get(call, "args"), f"{where}.functionCall.args"),
                )
            )
        elif text is not None:
            parts.append(("text", _str(text, f"{where}.text"), False))
    return parts


def _declared_name(provider_name: str, declared: Sequence[str]) -> str:
    if provider_name in declared:
        return provider_name
    try:
        return timeline_tool_name(provider_name, declared)
    except ValueError:
        return provider_name


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def digest(response: Mapping[str, Any]) -> str:
    """A stable digest of a reply's JSON (sorted keys, null members left out: the SDK's dump of a
    reply and the JSON the API sent digest alike): equal bodies, equal digests."""
    text = json.dumps(
        _without_nulls(response), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def parse_reply(response: Mapping[str, Any], *, declared: Sequence[str] = ()) -> Reply:
    """The blocks and tool calls of one reply (see the module docstring); raises
    :class:`ReplyError` naming the field that is wrong."""
    fmt = reply_format(response)
    raw_id = _get(response, "id", "responseId", "response_id")
    response_id = _str(raw_id, "response.id", required=False)
    if not response_id or len(response_id) > MAX_RESPONSE_ID:
        raise ReplyError(
            f"the reply's id (Gemini: responseId) is required, 1 to {MAX_RESPONSE_ID} characters: "
            "replies are stored once per id",
            "response.id",
        )
    model = _get(response, "model", "modelVersion", "model_version")
    usage = _get(response, "usage", "usageMetadata", "usage_metadata")
    if fmt == "gemini" and isinstance(usage, Mapping):
        usage = gemini_usage(usage)
    if fmt == "anthropic":
        parts = _anthropic_parts(response)
    elif fmt == "openai_responses":
        parts = _responses_parts(response)
    elif fmt == "openai_chat":
        parts = _chat_parts(response)
    else:
        parts = _gemini_parts(response, response_id)
    reply_meta = {"response_id": response_id, "digest": digest(response)}
    has_calls = any(p[0] == "call" for p in parts)
    blocks: list[NewBlock] = []
    calls: list[ToolCall] = []
    for part in parts:
        if part[0] == "thinking":
            blocks.append(NewBlock(type=b.THINKING, author="assistant", text=part[2], meta=dict(part[1])))
        elif part[0] == "text":
            text, refusal = part[1], part[2]
            if has_calls and not text.strip():
                continue
            meta: dict[str, Any] = {"refusal": True} if refusal else {}
            if has_calls:
                blocks.append(NewBlock(type=b.NOTES, author="react", mime="text/plain", text=text, meta=meta))
            else:
                blocks.append(
                    NewBlock(
                        type=b.ASSISTANT_COMPLETION,
                        author="assistant",
                        mime="text/plain",
                        text=text,
                        meta=meta,
                    )
                )
        else:
            _, call_id, provider_name, arguments = part
            name = _declared_name(provider_name, declared)
            calls.append(ToolCall(call_id, name, provider_name, arguments))
            blocks.append(
                NewBlock(
                    type=b.TOOL_CALL,
                    author="react",
                    mime="application/json",
                    text=json.dumps({"tool_id": name, "params": arguments}, ensure_ascii=False),
                    meta={"tool_call_id": call_id, "tool_id": name},
                )
            )
    if not has_calls and not any(nb.type == b.ASSISTANT_COMPLETION for nb in blocks):
        blocks.append(NewBlock(type=b.ASSISTANT_COMPLETION, author="assistant", mime="text/plain"))
    for k, nb in enumerate(blocks):
        nb.client_id = f"reply:{response_id}:{k}"
        nb.meta["reply"] = dict(reply_meta)
    return Reply(
        format=fmt,
        response_id=response_id,
        model=model if isinstance(model, str) else "",
        usage=dict(usage) if isinstance(usage, Mapping) else None,
        blocks=blocks,
        calls=calls,
    )
