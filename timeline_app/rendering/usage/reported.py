"""A provider's usage object, as its SDK returns it, read into billed tokens by kind (pure).

Shapes accepted (extra keys the SDKs add, such as ``service_tier`` or ``server_tool_use``, are
ignored, and not stored: ``kept_usage`` is what a report keeps):

* Anthropic Messages ``usage``: ``input_tokens`` (the uncached remainder), ``output_tokens``,
  ``cache_creation_input_tokens``, ``cache_read_input_tokens`` and optionally ``cache_creation:
  {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`` (without it every write is 5-minute);
* OpenAI Chat Completions ``usage``: ``prompt_tokens``, ``completion_tokens``,
  ``prompt_tokens_details.cached_tokens`` (and ``cache_write_tokens`` when the SDK reports it);
* OpenAI Responses ``usage``: ``input_tokens``, ``output_tokens``,
  ``input_tokens_details.cached_tokens`` and, for GPT-5.6 and later, ``cache_write_tokens`` with
  ``cache_write_tokens_details: {ttl_30m_tokens, ttl_12h_tokens}``;
* Gemini ``usage_metadata``: ``prompt_token_count`` (the cached ones among them),
  ``cached_content_token_count``, ``tool_use_prompt_token_count`` (input too),
  ``candidates_token_count`` and ``thoughts_token_count`` (both billed as output). The SDK's
  ``model_dump()`` names them so; the REST API's camelCase names are read too.

OpenAI's written tokens are cache writes: 30-minute ones (and every write without the TTL split)
in the ``cache_write_5m`` slot, 12-hour ones in ``cache_write_1h``, priced at the price table's
``cache_write_5m`` / ``cache_write_1h`` for the model: 1.25× input for GPT-5.6 and later, the plain
input price for older models (no write surcharge).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .forecast import Provider
from .pricing import TokenCounts

MAX_TOKENS = 100_000_000
CACHE_MISS_REASONS = (
    "model_changed",
    "system_changed",
    "tools_changed",
    "messages_changed",
    "previous_message_not_found",
    "unavailable",
)


# What ``read_usage`` reads of each shape: top-level counts, and the detail object with its counts.
# A stored report keeps only these (``kept_usage``): a few hundred bytes whatever else was sent.
SHAPE_KEYS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "anthropic": (
        ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
        "cache_creation",
        ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"),
    ),
    "chat": (
        ("prompt_tokens", "completion_tokens"),
        "prompt_tokens_details",
        ("cached_tokens", "cache_write_tokens"),
    ),
    "responses": (
        ("input_tokens", "output_tokens", "total_tokens"),
        "input_tokens_details",
        ("cached_tokens", "cache_write_tokens"),
    ),
    "gemini": (
        (
            "prompt_token_count",
            "cached_content_token_count",
            "tool_use_prompt_token_count",
            "candidates_token_count",
            "thoughts_token_count",
        ),
        "",
        (),
    ),
}


def usage_shape(usage: Mapping[str, Any]) -> str:
    """Which SDK object ``usage`` is, by its keys: ``gemini``, ``chat``, ``responses`` or
    ``anthropic``."""
    if is_gemini_usage(usage):
        return "gemini"
    if "prompt_tokens" in usage:
        return "chat"
    if "input_tokens_details" in usage or "total_tokens" in usage:
        return "responses"
    return "anthropic"


def kept_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """What a stored report keeps of a usage object ``read_usage`` accepted: the keys its shape
    reads (``SHAPE_KEYS``; every count there is a checked integer, so this is bounded), extra SDK
    keys dropped. ``read_usage`` reads the same from it as from ``usage``."""
    shape = usage_shape(usage)
    if shape == "gemini":  # the REST API's camelCase names, kept under the SDK's (one of each)
        usage = gemini_usage(usage)
    counts, details, inner_counts = SHAPE_KEYS[shape]
    kept: dict[str, Any] = {key: usage[key] for key in counts if key in usage}
    inner = usage.get(details) if details else None
    if isinstance(inner, Mapping):
        kept[details] = {key: inner[key] for key in inner_counts if key in inner}
    elif details and details in usage:
        kept[details] = inner  # None: read as absent
    return kept


class UsageError(ValueError):
    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ReportedUsage:
    provider: Provider
    tokens: TokenCounts


def _count(
    usage: Mapping[str, Any], key: str, *, where: str, required: bool = True, bound: int = MAX_TOKENS
) -> int:
    value = usage.get(key)
    if value is None:
        if required:
            raise UsageError(f"{where}{key} is required", f"{where}{key}")
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= bound:
        raise UsageError(f"{where}{key} must be an integer between 0 and {bound}", f"{where}{key}")
    return int(value)


def _details(usage: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = usage.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"{key} must be an object", key)
    return value


def read_usage(usage: Any) -> ReportedUsage:
    """Billed tokens by kind; ``UsageError`` names the offending field of a malformed object."""
    if not isinstance(usage, Mapping):
        raise UsageError("usage must be an object", "usage")
    shape = usage_shape(usage)
    if shape == "gemini":
        return _gemini(usage)
    if shape == "chat":
        return _openai(
            usage, prompt="prompt_tokens", details="prompt_tokens_details", output="completion_tokens"
        )
    if shape == "responses":
        # total_tokens only names the shape, but a stored report keeps it: an integer too.
        _count(usage, "total_tokens", where="", required=False, bound=2 * MAX_TOKENS)
        return _openai(usage, prompt="input_tokens", details="input_tokens_details", output="output_tokens")
    if "input_tokens" not in usage:
        raise UsageError(
            "not a usage object: expected Anthropic's input_tokens or OpenAI's prompt_tokens", "usage"
        )
    uncached = _count(usage, "input_tokens", where="")
    created = _count(usage, "cache_creation_input_tokens", where="", required=False)
    read = _count(usage, "cache_read_input_tokens", where="", required=False)
    output = _count(usage, "output_tokens", where="", required=False)
    by_ttl = _details(usage, "cache_creation")
    if by_ttl:
        five = _count(by_ttl, "ephemeral_5m_input_tokens", where="cache_creation.", required=False)
        hour = _count(by_ttl, "ephemeral_1h_input_tokens", where="cache_creation.", required=False)
        if five + hour != created:
            raise UsageError(
                "cache_creation's 5m and 1h tokens must add up to cache_creation_input_tokens",
                "cache_creation",
            )
    else:
        five, hour = created, 0
    return ReportedUsage("anthropic", TokenCounts(uncached, read, five, hour, output))


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake(key: str) -> str:
    """``promptTokenCount`` → ``prompt_token_count`` (a snake_case name stays as it is)."""
    return _CAMEL.sub(r"_\1", key).lower()


def is_gemini_usage(usage: Any) -> bool:
    return isinstance(usage, Mapping) and ("prompt_token_count" in usage or "promptTokenCount" in usage)


def gemini_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """Gemini's ``usage_metadata`` as one reading keeps it, however it came (the REST API's
    camelCase, the SDK's snake_case dump, the client's report): snake_case names, its counts only
    (null members and the per-modality detail lists left out). ``POST …/usage/`` and ``POST
    …/replies/`` store this, so the same call reported both ways is the same report."""
    return {
        _snake(key): value
        for key, value in usage.items()
        if value is not None and not isinstance(value, (list, Mapping))
    }


def _gemini(usage: Mapping[str, Any]) -> ReportedUsage:
    """Gemini's ``usage_metadata``: implicit caching reads, no writes; thinking billed as output."""
    plain = gemini_usage(usage)
    prompt = _count(plain, "prompt_token_count", where="")
    cached = _count(plain, "cached_content_token_count", where="", required=False)
    tool_prompt = _count(plain, "tool_use_prompt_token_count", where="", required=False)
    output = _count(plain, "candidates_token_count", where="", required=False)
    thoughts = _count(plain, "thoughts_token_count", where="", required=False)
    if cached > prompt:
        raise UsageError(
            "cached_content_token_count cannot exceed prompt_token_count", "cached_content_token_count"
        )
    return ReportedUsage(
        "google", TokenCounts(prompt - cached + tool_prompt, cached, 0, 0, output + thoughts)
    )


def _openai(usage: Mapping[str, Any], *, prompt: str, details: str, output: str) -> ReportedUsage:
    """One of OpenAI's two usage shapes, named by its keys: the prompt's tokens (cached and
    written ones among them, in ``details``) and the output's."""
    inner = _details(usage, details)
    prompt_tokens = _count(usage, prompt, where="")
    cached = _count(inner, "cached_tokens", where=f"{details}.", required=False)
    written = _count(inner, "cache_write_tokens", where=f"{details}.", required=False)
    output_tokens = _count(usage, output, where="", required=False)
    if cached + written > prompt_tokens:
        raise UsageError("cached and written tokens cannot exceed the input tokens", details)
    split = _details(inner, "cache_write_tokens_details")
    where = f"{details}.cache_write_tokens_details."
    if split:
        short = _count(split, "ttl_30m_tokens", where=where, required=False)
        long_ = _count(split, "ttl_12h_tokens", where=where, required=False)
        if short + long_ != written:
            raise UsageError(
                "cache_write_tokens_details' 30m and 12h tokens must add up to cache_write_tokens",
                f"{details}.cache_write_tokens_details",
            )
    else:
        short, long_ = written, 0
    return ReportedUsage(
        "openai", TokenCounts(prompt_tokens - cached - written, cached, short, long_, output_tokens)
    )
