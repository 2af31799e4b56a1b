"""A simulator of Anthropic's prompt cache: what a sequence of Messages API requests is billed.

An independent referee for the cache cost of a render (``bench cache-cost``, and later the
service's own usage forecast): it reads nothing of the service but the token counter, and applies
the provider's documented rules to the exact request bodies.

Interface::

    usage = simulate([(t_seconds, request), ...])      # one usage dict per request, in order
    usage[i] == {
        "input_tokens": …,                      # uncached: after the last cached breakpoint
        "cache_creation_input_tokens": …,       # written to the cache by this request
        "cache_read_input_tokens": …,           # read from the cache
        "cache_creation": {"ephemeral_5m_input_tokens": …, "ephemeral_1h_input_tokens": …},
    }
    cost(usage[i])  # in base input-token units: 1× input, 1.25× 5-minute write, 2× 1-hour write, 0.1× read

``request`` is the body of ``messages.create`` (``system`` a string or text blocks, ``messages``,
optional ``tools``); ``t_seconds`` is when it is sent (seconds, non-decreasing). ``CacheSimulator``
keeps the cache between calls (``sim.request(t, request)``).

The rules (Anthropic's prompt caching documentation; numbers are parameters):

* The prompt is one sequence of content blocks: ``tools`` (one block per tool), ``system`` (one per
  text block), then every content block of every message (a message boundary and its role are part
  of the next block's identity). ``cache_control`` is not part of the content.
* A cache entry is keyed by the hash of the exact prefix up to and including one block. Entries
  are written only at breakpoints (blocks carrying ``cache_control``) whose prefix is at least
  ``min_tokens`` long (below it the request silently caches nothing there).
* Lookup: for each breakpoint, the prefix ending at the breakpoint and at each of the ``lookback``
  (20) block boundaries before it is looked up; the longest prefix found is read
  (``cache_read_input_tokens``) and its entry's lifetime refreshed.
* Every breakpoint past that prefix, long enough, writes its entry; the tokens from the read
  prefix to the last written breakpoint are ``cache_creation_input_tokens``, split by the TTL of the
  breakpoint that ends each stretch (``{"ttl": "1h"}``: 1 hour, else 5 minutes). The rest of the
  prompt is ``input_tokens``.
* An entry lives ``ttl`` seconds from its last write or hit.

Token counts: each block's text (``text``; a ``tool_use``'s name and JSON input; a
``tool_result``'s content), with the project's counter (``domain.tokens``); images and documents
by ``count_binary_tokens``. No per-message overhead is counted (the same for every format).

``ideal`` prices what perfect breakpoints would cost: any block boundary can be cached, no minimum
length, unlimited lookback, entries living the given TTL from their last use. Each request reads
(0.1×) the longest prefix it shares with a live earlier request, writes (1.25×; 2× with a TTL of an
hour) its new stretch up to the last prefix some later request reads, and pays 1× for the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from timeline_app.domain.tokens import count_binary_tokens, count_text_tokens

LOOKBACK_BLOCKS = 20
MIN_TOKENS = 1024
# The minimum cacheable prompt per model family (Anthropic's prompt-caching documentation).
MIN_TOKENS_BY_MODEL = {"claude-sonnet-4-5": 1024, "claude-haiku-4-5": 4096, "claude-opus-4-5": 4096}
TTL_5M = 300
TTL_1H = 3600
PRICE_INPUT = 1.0
PRICE_WRITE_5M = 1.25
PRICE_WRITE_1H = 2.0
PRICE_READ = 0.1

Usage = dict[str, Any]


@dataclass(frozen=True)
class FlatBlock:
    """One content block of the prompt: the hash of the prefix ending with it, its tokens, and
    its breakpoint TTL in seconds (0: no ``cache_control``)."""

    prefix_hash: str
    tokens: int
    breakpoint_ttl: int


def _block_tokens(block: Any) -> int:
    if isinstance(block, str):
        return count_text_tokens(block)
    if not isinstance(block, Mapping):
        return count_text_tokens(json.dumps(block, sort_keys=True, default=str))
    kind = block.get("type")
    if kind == "text":
        return count_text_tokens(str(block.get("text", "")))
    if kind in ("image", "document"):
        source = block.get("source") or {}
        if source.get("type") == "base64":
            return count_binary_tokens(
                mime=str(source.get("media_type", "")), data_b64=str(source.get("data", ""))
            )
        return count_binary_tokens(mime="image/png" if kind == "image" else "application/pdf", data_b64="x")
    if kind == "tool_use":
        return count_text_tokens(str(block.get("name", ""))) + count_text_tokens(
            json.dumps(block.get("input", {}), sort_keys=True, ensure_ascii=False)
        )
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return count_text_tokens(content)
        return sum(_block_tokens(part) for part in content)
    if kind == "thinking":
        return count_text_tokens(str(block.get("thinking", "")))
    if kind == "redacted_thinking":
        return count_text_tokens(str(block.get("data", "")))
    # A tool definition, or a block type not listed: its JSON.
    return count_text_tokens(json.dumps(block, sort_keys=True, ensure_ascii=False))


def _ttl_of(block: Any) -> int:
    control = block.get("cache_control") if isinstance(block, Mapping) else None
    if not isinstance(control, Mapping):
        return 0
    return TTL_1H if control.get("ttl") == "1h" else TTL_5M


def _without_control(block: Any) -> Any:
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def flatten(request: Mapping[str, Any]) -> list[FlatBlock]:
    """The prompt as content blocks in cache order: tools, system, messages."""
    located: list[tuple[str, Any]] = [("tools", tool) for tool in request.get("tools") or []]
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    located += [("system", block) for block in system]
    for index, message in enumerate(request.get("messages") or []):
        content = message.get("content", "")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for position, block in enumerate(content):
            # A new message (and its role) is part of its first block's identity.
            where = f"{index}:{message.get('role')}" if position == 0 else "+"
            located.append((where, block))
    out: list[FlatBlock] = []
    running = hashlib.sha256()
    for where, block in located:
        running.update(where.encode())
        running.update(json.dumps(_without_control(block), sort_keys=True, ensure_ascii=False).encode())
        running.update(b"\x00")
        out.append(FlatBlock(running.copy().hexdigest(), _block_tokens(block), _ttl_of(block)))
    return out


def usage_dict(*, input_tokens: int, read: int, write_5m: int, write_1h: int) -> Usage:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": write_5m + write_1h,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write_5m, "ephemeral_1h_input_tokens": write_1h},
    }


def cost(usage: Usage) -> float:
    """The request's prompt price in base input-token units."""
    creation = usage["cache_creation"]
    return float(
        PRICE_INPUT * usage["input_tokens"]
        + PRICE_WRITE_5M * creation["ephemeral_5m_input_tokens"]
        + PRICE_WRITE_1H * creation["ephemeral_1h_input_tokens"]
        + PRICE_READ * usage["cache_read_input_tokens"]
    )


@dataclass
class CacheSimulator:
    """Anthropic's prompt cache for one model and workspace: entries ``prefix hash -> (expires
    at, ttl)``, kept across ``request`` calls."""

    min_tokens: int = MIN_TOKENS
    lookback: int = LOOKBACK_BLOCKS
    entries: dict[str, tuple[float, int]] = field(default_factory=dict)

    def _alive(self, key: str, now: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry[0] > now

    def request(self, now: float, request: Mapping[str, Any]) -> Usage:
        blocks = flatten(request)
        cumulative: list[int] = []
        total = 0
        for block in blocks:
            total += block.tokens
            cumulative.append(total)
        breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint_ttl]
        # The longest live prefix within the lookback window of any breakpoint.
        hit = -1
        for b in breakpoints:
            for p in range(b, max(-1, b - self.lookback - 1), -1):
                if p <= hit:
                    break
                if self._alive(blocks[p].prefix_hash, now):
                    hit = p
                    break
        read = cumulative[hit] if hit >= 0 else 0
        if hit >= 0:
            _, ttl = self.entries[blocks[hit].prefix_hash]
            self.entries[blocks[hit].prefix_hash] = (now + ttl, ttl)
        write = {TTL_5M: 0, TTL_1H: 0}
        written_to = hit
        for b in breakpoints:
            key, ttl = blocks[b].prefix_hash, blocks[b].breakpoint_ttl
            if cumulative[b] < self.min_tokens:
                continue
            if b <= hit:
                if self._alive(key, now):  # an earlier breakpoint's entry: refreshed too
                    self.entries[key] = (now + max(ttl, self.entries[key][1]), max(ttl, self.entries[key][1]))
                continue
            start = cumulative[written_to] if written_to >= 0 else 0
            write[ttl] += cumulative[b] - start
            written_to = b
            self.entries[key] = (now + ttl, ttl)
        cached = cumulative[written_to] if written_to >= 0 else 0
        return usage_dict(
            input_tokens=total - cached, read=read, write_5m=write[TTL_5M], write_1h=write[TTL_1H]
        )


def min_tokens_for(model: str) -> int:
    """The minimum cacheable length of ``model`` (a dated name counts as its family)."""
    return next((v for k, v in MIN_TOKENS_BY_MODEL.items() if model.startswith(k)), MIN_TOKENS)


def simulate(
    requests_with_times: Iterable[tuple[float, Mapping[str, Any]]],
    *,
    min_tokens: int = MIN_TOKENS,
    lookback: int = LOOKBACK_BLOCKS,
) -> list[Usage]:
    """Per-request usage of a sequence of ``(t_seconds, request)`` against one fresh cache."""
    sim = CacheSimulator(min_tokens=min_tokens, lookback=lookback)
    return [sim.request(t, request) for t, request in requests_with_times]


def ideal(requests_with_times: Sequence[tuple[float, Mapping[str, Any]]], *, ttl_seconds: int) -> list[float]:
    """Per-request prompt price with a perfect cache (see the module's docstring)."""
    write_price = PRICE_WRITE_1H if ttl_seconds >= TTL_1H else PRICE_WRITE_5M
    live: dict[str, float] = {}
    flat: list[list[FlatBlock]] = []
    reads: list[int] = []  # per request, the number of blocks of its longest live prefix
    last_read: dict[str, int] = {}  # prefix hash -> the last request that read up to it
    for index, (now, request) in enumerate(requests_with_times):
        blocks = flatten(request)
        read = 0
        for position, block in enumerate(blocks):
            if live.get(block.prefix_hash, -1.0) > now:
                read = position + 1
        if read:
            last_read[blocks[read - 1].prefix_hash] = index
        for block in blocks:
            live[block.prefix_hash] = now + ttl_seconds
        flat.append(blocks)
        reads.append(read)
    prices: list[float] = []
    for index, (blocks, read) in enumerate(zip(flat, reads, strict=True)):
        # Written (at the TTL's price): the new stretch up to the last prefix a later request reads.
        later = [p + 1 for p in range(read, len(blocks)) if last_read.get(blocks[p].prefix_hash, -1) > index]
        written_to = max(later, default=read)
        tokens = [block.tokens for block in blocks]
        read_tokens = sum(tokens[:read])
        written = sum(tokens[read:written_to])
        prices.append(
            PRICE_READ * read_tokens + write_price * written + PRICE_INPUT * sum(tokens[written_to:])
        )
    return prices
