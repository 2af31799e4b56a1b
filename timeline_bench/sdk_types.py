"""The providers' SDK request types as pydantic validators (`bench formats` and the tests; the pure
imports no SDK)."""

from __future__ import annotations

from typing import Any

from anthropic.types import MessageParam, TextBlockParam
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import PromptCacheOptions as ChatPromptCacheOptions
from openai.types.responses import ResponseInputParam
from openai.types.responses.response_create_params import PromptCacheOptions
from pydantic import TypeAdapter, ValidationError

_ANTHROPIC_MESSAGES = TypeAdapter(list[MessageParam])
_ANTHROPIC_SYSTEM = TypeAdapter(list[TextBlockParam])
_RESPONSES_INPUT = TypeAdapter(ResponseInputParam)
_CHAT_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])
# google-genai's types are pydantic models that forbid unknown fields; they take bytes (a
# signature, inline data) as base64 strings, as the SDK does with the dicts it is given.
_GEMINI_CONTENTS = TypeAdapter(list[genai_types.Content])
_GEMINI_CONFIG = TypeAdapter(genai_types.GenerateContentConfig)
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
    elif format == "gemini_contents":
        checks = [(_GEMINI_CONTENTS, request["contents"]), (_GEMINI_CONFIG, request.get("config", {}))]
    else:
        checks = [(_CHAT_MESSAGES, request["messages"])]
        if "prompt_cache_options" in request:
            checks.append((_CHAT_CACHE, request["prompt_cache_options"]))
    errors: list[str] = []
    for adapter, value in checks:
        try:
            # google-genai's bytes fields take base64 text only outside strict mode.
            _drain(adapter.validate_python(value, strict=format != "gemini_contents"))
        except ValidationError as error:
            errors.append(str(error)[:2000])
    return errors
