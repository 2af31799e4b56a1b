"""A rendered request as the usage forecast reads it (``forecast.CacheRequest``), for the
``anthropic``, ``openai`` and ``text`` formats.

The first block is what precedes the timeline (tools and system prompt: ``head_tokens``, its
digest the prefix seed, so a changed system prompt changes every later digest), then one block per
content part of the stable stream (a rendered block that emits several parts, an attachment with
its file, counts as several for the breakpoints' lookback; only its last part can carry a marker),
each with the cumulative digest of its rendered block. OpenAI formats carry no breakpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..prefix import Prefix
from .forecast import FIVE_MINUTES, ONE_HOUR, CacheBlock, CacheRequest, Provider

OPENAI_FORMATS = frozenset({"openai", "openai_responses", "openai_chat"})


def format_provider(format_name: str) -> Provider:
    """The provider whose cache rules a format's requests follow."""
    return "openai" if format_name in OPENAI_FORMATS else "anthropic"


def marker_ttl(part: dict[str, Any]) -> int | None:
    """The TTL of a part's ``cache_control`` (None: no marker)."""
    control = part.get("cache_control")
    if not isinstance(control, dict):
        return None
    return ONE_HOUR if control.get("ttl") == "1h" else FIVE_MINUTES


def rendered_request(
    *,
    provider: Provider,
    model: str,
    prefix: Prefix,
    parts: Sequence[dict[str, Any]],
    cache_points: Sequence[int],
    head_tokens: int,
    input_tokens: int,
) -> CacheRequest:
    """``parts``: the rendered items (content parts, or chat messages for OpenAI); ``cache_points``
    their indices carrying a marker; ``input_tokens`` the whole request's input."""
    blocks: list[CacheBlock] = []
    if head_tokens > 0:
        blocks.append(CacheBlock(prefix.seed, head_tokens))
    count = len(prefix.digests)
    ends = list(prefix.indices[1:])
    if count:
        last_end = max(
            (p + 1 for p in cache_points if p >= prefix.indices[-1]), default=prefix.indices[-1] + 1
        )
        ends.append(last_end)
    marked = {p: marker_ttl(parts[p]) for p in cache_points if 0 <= p < len(parts)}
    before = head_tokens
    for i in range(count):
        digest, tokens = prefix.digests[i], head_tokens + prefix.tokens[i]
        if provider == "anthropic":
            first, end = prefix.indices[i], ends[i]
            blocks.extend(CacheBlock(digest + bytes([k]), before) for k in range(end - first - 1))
            blocks.append(CacheBlock(digest, tokens, marked.get(end - 1)))
        else:
            blocks.append(CacheBlock(digest, tokens))
        before = tokens
    return CacheRequest(provider=provider, model=model, blocks=tuple(blocks), input_tokens=input_tokens)
