"""A rendered request as the usage forecast reads it (``forecast.CacheRequest``), for the
``anthropic``, ``openai`` and ``text`` formats and the native ones (``openai_responses`` and
``openai_chat`` as ``openai``; ``gemini_contents`` as ``google``, without breakpoints like OpenAI;
``anthropic_messages`` by :func:`native_anthropic_request`).

The first block is what precedes the timeline (tools and system prompt: ``head_tokens``, its
digest the prefix seed, so a changed system prompt changes every later digest), then one block per
content part of the stable stream (a rendered block that emits several parts, an attachment with
its file, counts as several for the breakpoints' lookback; only its last part can carry a marker),
each with the cumulative digest of its rendered block. OpenAI formats carry no breakpoints, except
for GPT-5.6 and later (:func:`native_openai_request`: ``prompt_cache_breakpoint`` markers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cache_plan import OPENAI_MAX_WRITES
from ..prefix import Prefix
from .forecast import FIVE_MINUTES, ONE_HOUR, THIRTY_MINUTES, TWELVE_HOURS, CacheBlock, CacheRequest, Provider

OPENAI_FORMATS = frozenset({"openai", "openai_responses", "openai_chat"})
GEMINI_FORMATS = frozenset({"gemini_contents"})


def format_provider(format_name: str) -> Provider:
    """The provider whose cache rules a format's requests follow."""
    if format_name in GEMINI_FORMATS:
        return "google"
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


def native_anthropic_request(
    *,
    model: str,
    prefix: Prefix,
    request: dict[str, Any],
    marked_seqs: Sequence[int],
    head_tokens: int,
    input_tokens: int,
    through: Sequence[int] = (),
    system_tokens: int = 0,
) -> CacheRequest:
    """The native ``anthropic_messages`` request: the head (its breakpoint when the system prompt
    carries one), then one block per rendered timeline block, a breakpoint on each block whose
    content carries a marker. Each block's tokens are the request's through its content
    (``through``, the render's ``request_through``: ``request_tokens.py``'s count, which the
    provider simulator counts too; the tools of ``head_tokens`` beyond ``system_tokens`` before
    them), else the stored blocks'. Approximate where the native request regroups content:
    several timeline blocks merged into one message still count one block each for the 20-block
    lookback, and a system-role block moved into the system prompt keeps its place in the chain."""
    system = request.get("system") or []
    head_ttl = marker_ttl(system[-1]) if system and isinstance(system[-1], dict) else None
    ttl = next(
        (
            marker_ttl(part)
            for message in request.get("messages", ())
            for part in message.get("content", ())
            if isinstance(part, dict) and "cache_control" in part
        ),
        None,
    )
    return CacheRequest(
        provider="anthropic",
        model=model,
        blocks=_marked_blocks(
            prefix,
            marked_seqs,
            head_tokens=head_tokens,
            head_ttl=head_ttl,
            ttl=ttl,
            through=through,
            system_tokens=system_tokens,
        ),
        input_tokens=input_tokens,
    )


def _marked_blocks(
    prefix: Prefix,
    marked_seqs: Sequence[int],
    *,
    head_tokens: int,
    head_ttl: int | None,
    ttl: int | None,
    through: Sequence[int] = (),
    system_tokens: int = 0,
) -> tuple[CacheBlock, ...]:
    marked = set(marked_seqs)
    blocks: list[CacheBlock] = []
    if head_tokens > 0:
        blocks.append(CacheBlock(prefix.seed, head_tokens, head_ttl))
    if len(through) == len(prefix.digests):  # the request's own count (tools before it)
        counts = tuple(head_tokens - system_tokens + tokens for tokens in through)
    else:
        counts = tuple(head_tokens + tokens for tokens in prefix.tokens)
    # A stored block can render as more than one segment (a continued turn's header shares the seq
    # of the block after it): its marker sits on its last segment, once, as in the request.
    last_of = {seq: i for i, seq in enumerate(prefix.seqs)}
    for i, (digest, tokens, seq) in enumerate(zip(prefix.digests, counts, prefix.seqs, strict=True)):
        marker = ttl if seq in marked and last_of[seq] == i else None
        blocks.append(CacheBlock(digest, tokens, marker))
    return tuple(blocks)


def native_openai_request(
    *,
    model: str,
    prefix: Prefix,
    request: dict[str, Any],
    marked_seqs: Sequence[int],
    head_tokens: int,
    input_tokens: int,
    through: Sequence[int] = (),
    system_tokens: int = 0,
) -> CacheRequest:
    """A native OpenAI request with explicit breakpoints (``prompt_cache_options`` present): the
    head (its breakpoint when the system message's part carries one), then one block per rendered
    timeline block, a breakpoint on each block whose content carries one, its tokens counted as
    :func:`native_anthropic_request` counts them. Without
    ``prompt_cache_options``: the automatic-caching request of :func:`rendered_request`."""
    options = request.get("prompt_cache_options")
    ttl = TWELVE_HOURS if isinstance(options, dict) and options.get("ttl") == "12h" else THIRTY_MINUTES
    items = request.get("input", request.get("messages")) or []
    first = items[0] if items and isinstance(items[0], dict) else {}
    content = first.get("content") if first.get("role") == "system" else None
    head_marked = isinstance(content, list) and bool(content) and "prompt_cache_breakpoint" in content[-1]
    return CacheRequest(
        provider="openai",
        model=model,
        blocks=_marked_blocks(
            prefix,
            marked_seqs,
            head_tokens=head_tokens,
            head_ttl=ttl if head_marked else None,
            ttl=ttl,
            through=through,
            system_tokens=system_tokens,
        ),
        input_tokens=input_tokens,
        explicit=True,
    )


def spread_read_through(
    *,
    request: dict[str, Any] | None,
    seqs: Sequence[int],
    marked_seqs: Sequence[int],
    read_block: int | None,
    head_tokens: int,
) -> int | None:
    """For a request with OpenAI explicit breakpoints whose forecast reads up to ``read_block``
    (the forecast's index: the head first when ``head_tokens``, then one per stable block): the
    last stable index read (-1: the head at most) when more than ``OPENAI_MAX_WRITES`` of its
    breakpoints lie past it (``cache_plan.spread`` then spreads the writes); else None."""
    if request is None or "prompt_cache_options" not in request:
        return None
    offset = 1 if head_tokens > 0 else 0
    through = -1 if read_block is None else read_block - offset
    marked = set(marked_seqs)
    past = {seq for index, seq in enumerate(seqs) if index > through and seq in marked}
    return through if len(past) > OPENAI_MAX_WRITES else None
