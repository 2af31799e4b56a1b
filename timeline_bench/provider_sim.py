"""Simulators of Anthropic's prompt cache and of OpenAI's (GPT-5.6 and later): what a sequence of
requests is billed.

An independent referee for the cache cost of a render (``bench cache-cost``, and later the
service's own usage forecast): it reads nothing of the service but the token counter (``request_tokens``: what a prompt's
blocks are and how many tokens each holds), and applies
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
``tool_result``'s content), with the project's counter; images and documents by
``count_binary_tokens``. No per-message overhead is counted (the same for every format). The
blocks and their tokens are ``rendering/usage/request_tokens.py``'s: the one definition of a
prefix's length that the service's forecast counts too (the rules above are this module's own).

``ideal`` prices what perfect breakpoints would cost: any block boundary can be cached, no minimum
length, unlimited lookback, entries living the given TTL from their last use. Each request reads
(0.1×) the longest prefix it shares with a live earlier request, writes (1.25×; 2× with a TTL of an
hour) its new stretch up to the last prefix some later request reads, and pays 1× for the rest.

OpenAI, GPT-5.6 and later (:class:`OpenAICacheSimulator`, ``simulate_openai``): the body of
``responses.create`` (``instructions``, ``input``) or ``chat.completions.create`` (``messages``)
is flattened the same way (every content part, function call, function-call output part and
reasoning item a block; ``prompt_cache_breakpoint`` not part of the content). A prefix matches
only **exactly at a breakpoint** the request carries (no lookback, no shorter fallback); the
latest ``max_breakpoints`` (80) of the request are looked up, the longest live one read. With
``prompt_cache_options.mode == "explicit"`` the latest ``max_writes`` (4) breakpoints are written;
otherwise (implicit, the default) one implicit breakpoint at the end of the newest input message
and the latest three explicit ones. A write needs ``min_tokens`` (1,024); an entry lives its TTL
(the breakpoint's, else the request's ``prompt_cache_options.ttl``, else 30 minutes) from its
last write or hit; a hit also refreshes the live entries of the request's earlier breakpoints
(their prefixes are inside the one read, as in a block-level prefix cache). Usage comes back as the Responses API reports it (``input_tokens`` with
``input_tokens_details.cached_tokens`` / ``cache_write_tokens`` / ``cache_write_tokens_details``);
:func:`openai_cost` prices it: 1× input, 1.25× written, 0.1× read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from timeline_app.rendering.usage.request_tokens import (
    anthropic_block_tokens,
    anthropic_blocks,
    openai_part_tokens,
    openai_parts,
)

LOOKBACK_BLOCKS = 20
MIN_TOKENS = 1024
# The minimum cacheable prompt per model family (Anthropic's prompt-caching documentation).
MIN_TOKENS_BY_MODEL = {
    "claude-sonnet-5-5": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-haiku-4-5": 4096,
    "claude-opus-4-5": 4096,
}
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
    """The prompt as content blocks in cache order: tools, system, messages (the order and the
    tokens of ``request_tokens``, the service's own definition of a prefix's length)."""
    out: list[FlatBlock] = []
    running = hashlib.sha256()
    roles = [message.get("role") for message in request.get("messages") or []]
    for index, position, block in anthropic_blocks(request):
        # A new message (and its role) is part of its first block's identity.
        where = {-2: "tools", -1: "system"}.get(index) or (
            f"{index}:{roles[index]}" if position == 0 else "+"
        )
        running.update(where.encode())
        running.update(json.dumps(_without_control(block), sort_keys=True, ensure_ascii=False).encode())
        running.update(b"\x00")
        out.append(FlatBlock(running.copy().hexdigest(), anthropic_block_tokens(block), _ttl_of(block)))
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
        cumulative = list(accumulate(block.tokens for block in blocks))
        total = cumulative[-1] if cumulative else 0
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
    flat = [flatten(request) for _, request in requests_with_times]
    return _ideal(
        [now for now, _ in requests_with_times], flat, ttl_seconds=ttl_seconds, write_price=write_price
    )


def _ideal(
    times: Sequence[float], flat: Sequence[Sequence[FlatBlock]], *, ttl_seconds: int, write_price: float
) -> list[float]:
    live: dict[str, float] = {}
    reads: list[int] = []  # per request, the number of blocks of its longest live prefix
    last_read: dict[str, int] = {}  # prefix hash -> the last request that read up to it
    for index, (now, blocks) in enumerate(zip(times, flat, strict=True)):
        read = 0
        for position, block in enumerate(blocks):
            if live.get(block.prefix_hash, -1.0) > now:
                read = position + 1
        if read:
            last_read[blocks[read - 1].prefix_hash] = index
        for block in blocks:
            live[block.prefix_hash] = now + ttl_seconds
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


# ---------------------------------------------------------------- OpenAI, GPT-5.6 and later

OPENAI_TTLS = {"30m": 1800, "12h": 43_200}
OPENAI_MAX_BREAKPOINTS = 80
OPENAI_MAX_WRITES = 4
OPENAI_PRICE_WRITE = 1.25
BREAKPOINT = "prompt_cache_breakpoint"


@dataclass(frozen=True)
class OpenAIBlock:
    """One block of an OpenAI prompt: the hash of the prefix ending with it, its tokens, the TTL
    name of the breakpoint it carries ("" for none, "default" for the request's), and whether it
    is input content (where the implicit breakpoint can go)."""

    prefix_hash: str
    tokens: int
    breakpoint: str
    is_input: bool


def _mark(part: Any) -> str:
    marker = part.get(BREAKPOINT) if isinstance(part, Mapping) else None
    if not isinstance(marker, Mapping):
        return ""
    return str(marker.get("ttl") or "default")


def flatten_openai(request: Mapping[str, Any]) -> list[OpenAIBlock]:
    """The prompt as blocks in order: instructions, then every item's parts (the order and the
    tokens of ``request_tokens``)."""
    items = request.get("input", request.get("messages")) or []
    out: list[OpenAIBlock] = []
    running = hashlib.sha256()
    for index, where, position, part in openai_parts(request):
        if index < 0:
            identity, is_input = "instructions", True
        else:
            item = items[index]
            role, kind = item.get("role"), item.get("type")
            if kind == "function_call_output":
                is_input = True
            elif kind in ("function_call", "reasoning"):
                is_input = False
            else:
                is_input = role in ("user", "system", "developer", "tool") and where != "tool_calls"
            head = {k: v for k, v in item.items() if k not in ("content", "output", "tool_calls")}
            first = position == 0 and where != "tool_calls"
            identity = f"{index}:{json.dumps(head, sort_keys=True)}" if first else "+"
        clean = {k: v for k, v in part.items() if k != BREAKPOINT} if isinstance(part, Mapping) else part
        running.update(identity.encode())
        running.update(json.dumps(clean, sort_keys=True, ensure_ascii=False).encode())
        running.update(b"\x00")
        out.append(OpenAIBlock(running.copy().hexdigest(), openai_part_tokens(clean), _mark(part), is_input))
    return out


def openai_usage(*, input_tokens: int, read: int, write_30m: int, write_12h: int) -> Usage:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {
            "cached_tokens": read,
            "cache_write_tokens": write_30m + write_12h,
            "cache_write_tokens_details": {"ttl_30m_tokens": write_30m, "ttl_12h_tokens": write_12h},
        },
        "output_tokens": 0,
        "total_tokens": input_tokens,
    }


def openai_cost(usage: Usage) -> float:
    """The request's prompt price in base input-token units."""
    details = usage["input_tokens_details"]
    read, written = details["cached_tokens"], details["cache_write_tokens"]
    uncached = usage["input_tokens"] - read - written
    return float(PRICE_INPUT * uncached + OPENAI_PRICE_WRITE * written + PRICE_READ * read)


@dataclass
class OpenAICacheSimulator:
    """OpenAI's prompt cache (GPT-5.6 and later) for one model and key: entries ``prefix hash ->
    (expires at, ttl)``."""

    min_tokens: int = MIN_TOKENS
    max_breakpoints: int = OPENAI_MAX_BREAKPOINTS
    max_writes: int = OPENAI_MAX_WRITES
    entries: dict[str, tuple[float, int]] = field(default_factory=dict)

    def request(self, now: float, request: Mapping[str, Any]) -> Usage:
        blocks = flatten_openai(request)
        options = request.get("prompt_cache_options") or {}
        explicit = options.get("mode") == "explicit"
        default_ttl = OPENAI_TTLS.get(str(options.get("ttl") or "30m"), OPENAI_TTLS["30m"])
        cumulative = list(accumulate(block.tokens for block in blocks))
        total = cumulative[-1] if cumulative else 0
        marked = [i for i, block in enumerate(blocks) if block.breakpoint]
        ttl_of = {i: OPENAI_TTLS.get(blocks[i].breakpoint, default_ttl) for i in marked}
        if explicit:
            writes = marked[-self.max_writes :]
        else:  # one implicit breakpoint at the end of the newest input message, 3 explicit ones
            implicit = next((i for i in range(len(blocks) - 1, -1, -1) if blocks[i].is_input), None)
            writes = marked[-(self.max_writes - 1) :]
            if implicit is not None:
                ttl_of.setdefault(implicit, default_ttl)
                writes = sorted({*writes, implicit})
                marked = sorted({*marked, implicit})
        looked_up = marked[-self.max_breakpoints :]
        hit = next((p for p in reversed(looked_up) if self._alive(blocks[p].prefix_hash, now)), -1)
        read = cumulative[hit] if hit >= 0 else 0
        for p in looked_up:  # the hit, and the live entries of earlier breakpoints inside it
            if p <= hit and self._alive(blocks[p].prefix_hash, now):
                _, ttl = self.entries[blocks[p].prefix_hash]
                self.entries[blocks[p].prefix_hash] = (now + ttl, ttl)
        written = {OPENAI_TTLS["30m"]: 0, OPENAI_TTLS["12h"]: 0}
        long_ = [
            p
            for p in writes
            if p > hit and cumulative[p] >= self.min_tokens and ttl_of[p] == OPENAI_TTLS["12h"]
        ]
        short = [p for p in writes if p > hit and cumulative[p] >= self.min_tokens]
        start = read
        if long_:
            written[OPENAI_TTLS["12h"]] = cumulative[long_[-1]] - start
            start = cumulative[long_[-1]]
        if short:
            written[OPENAI_TTLS["30m"]] = max(0, cumulative[short[-1]] - start)
        for p in short:
            self.entries[blocks[p].prefix_hash] = (now + ttl_of[p], ttl_of[p])
        return openai_usage(
            input_tokens=total,
            read=read,
            write_30m=written[OPENAI_TTLS["30m"]],
            write_12h=written[OPENAI_TTLS["12h"]],
        )

    def _alive(self, key: str, now: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry[0] > now


def simulate_openai(
    requests_with_times: Iterable[tuple[float, Mapping[str, Any]]], *, min_tokens: int = MIN_TOKENS
) -> list[Usage]:
    """Per-request usage of a sequence of ``(t_seconds, request)`` against one fresh OpenAI cache."""
    sim = OpenAICacheSimulator(min_tokens=min_tokens)
    return [sim.request(t, request) for t, request in requests_with_times]


def without_breakpoints(request: Mapping[str, Any]) -> dict[str, Any]:
    """The same request with no ``prompt_cache_breakpoint`` and no ``prompt_cache_options``
    (what the API does with it: one implicit breakpoint)."""

    def strip(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: strip(v) for k, v in value.items() if k != BREAKPOINT}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {k: strip(v) for k, v in request.items() if k != "prompt_cache_options"}


def ideal_openai(
    requests_with_times: Sequence[tuple[float, Mapping[str, Any]]], *, ttl_seconds: int
) -> list[float]:
    """:func:`ideal` for OpenAI requests (writes 1.25× whatever the TTL)."""
    flat = [
        [FlatBlock(block.prefix_hash, block.tokens, 0) for block in flatten_openai(request)]
        for _, request in requests_with_times
    ]
    return _ideal(
        [now for now, _ in requests_with_times], flat, ttl_seconds=ttl_seconds, write_price=OPENAI_PRICE_WRITE
    )
