"""The providers' SDK request types as pydantic validators (`bench formats` and the tests; the pure
imports no SDK)."""

from __future__ import annotations

from typing import Any

from anthropic.types import MessageParam, TextBlockParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import PromptCacheOptions as ChatPromptCacheOptions
from openai.types.responses import ResponseInputParam
from openai.types.responses.response_create_params import PromptCacheOptions
from pydantic import TypeAdapter, ValidationError

_ANTHROPIC_MESSAGES = TypeAdapter(list[MessageParam])
_ANTHROPIC_SYSTEM = TypeAdapter(list[TextBlockParam])
_RESPONSES_INPUT = TypeAdapter(ResponseInputParam)
_CHAT_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])
_RESPONSES_CACHE = TypeAdapter(PromptCacheOptions)
_CHAT_CACHE = TypeAdapter(ChatPromptCacheOptions)


def _drain(value: Any) -> None:
    """Walk a validated value: pydantic validates an ``Iterable[...]`` field (the SDKs type
    ``content`` so) lazily, item by item, only while it is iterated."""
    if isinstance(value, dict):
        for item in value.values():
            _drain(item)
    elif isinstance(value, (str, bytes)):
        return
    elif hasattr(value, "__iter__"):
        for item in value:
            _drain(item)


def sdk_type_errors(format: str, request: dict[str, Any]) -> list[str]:
    """What the SDK's own request types reject in one native render's request."""
    checks: list[tuple[TypeAdapter[Any], Any]]
    if format == "anthropic_messages":
        checks = [(_ANTHROPIC_MESSAGES, request["messages"]), (_ANTHROPIC_SYSTEM, request.get("system", []))]
    elif format == "openai_responses":
        checks = [(_RESPONSES_INPUT, request["input"])]
        if "prompt_cache_options" in request:
            checks.append((_RESPONSES_CACHE, request["prompt_cache_options"]))
    else:
        checks = [(_CHAT_MESSAGES, request["messages"])]
        if "prompt_cache_options" in request:
            checks.append((_CHAT_CACHE, request["prompt_cache_options"]))
    errors: list[str] = []
    for adapter, value in checks:
        try:
            _drain(adapter.validate_python(value, strict=True))
        except ValidationError as error:
            errors.append(str(error)[:2000])
    return errors
