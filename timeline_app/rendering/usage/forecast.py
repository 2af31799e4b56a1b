"""The prompt-cache forecast: what the provider will bill a request as cache read, cache write and
uncached input, from the providers' documented caching rules (pure; time is passed in).

A request is described provider-neutrally as its content blocks in the order the provider reads
them (tools, system, then message content), each with the **cumulative** digest and token count of
the request up to and including that block, and the cache breakpoint (TTL in seconds) it carries,
if any. Whatever formats a request (the ``anthropic`` / ``openai`` / ``text`` renders here, and the
native provider formats) only has to produce that list and call :func:`forecast_usage`::

    forecast_usage(
        request=CacheRequest(provider="anthropic", model=model, blocks=blocks, input_tokens=total),
        state=CacheState(entries=..., prompts=...),  # from this context's recent renders
        now=now,
        rules=CacheRules(),
    ) -> Forecast  # its ``touched`` entries are what the render leaves in the cache

``replay`` runs a sequence of requests through one state (tests, and the state's meaning).

Anthropic (explicit breakpoints): at most ``max_breakpoints`` per request; each breakpoint looks
back ``lookback_blocks`` block boundaries (itself included) for the longest prefix still cached;
the longest hit over all breakpoints is read (and every live entry of an earlier breakpoint is
refreshed with it); every breakpoint past the read point whose prefix
reaches the model's minimum cacheable length is written (1-hour entries billed at the 1-hour
write price up to the last 1-hour breakpoint, the rest up to the last breakpoint at the 5-minute
price); what follows the last breakpoint is plain input. An entry lives ``ttl`` seconds from its
last write or hit (a hit refreshes it).

OpenAI (automatic, models before GPT-5.6): a prompt of at least ``openai_min_tokens`` is cached
whole; a later prompt reads the longest prefix it shares with a prompt still retained
(``openai_retention_seconds`` since that prefix was last used), counted in ``openai_step_tokens``
steps from ``openai_min_tokens`` on. There are no write charges.

OpenAI explicit breakpoints (GPT-5.6 and later, ``CacheRequest.explicit``): a prefix matches only
exactly at a breakpoint the request carries (no lookback, no shorter fallback); the request's
latest ``openai_max_breakpoints`` (80) are looked up and the longest live one is read; the latest
``openai_max_writes`` (4) are written when past the read point and at least ``openai_min_tokens``
long (12-hour ones billed up to the last 12-hour breakpoint, the rest as 30-minute writes: the
``cache_write_1h`` / ``cache_write_5m`` slots of the forecast); nothing is cached without a
breakpoint. An entry lives its TTL (30 minutes or 12 hours) from its last write or hit; a hit
also refreshes the live entries of the request's earlier breakpoints (their prefixes are inside
the one read).

Gemini (implicit caching): as OpenAI's automatic caching, without steps: a later prompt reads the
longest prefix it shares with a prompt still retained (``gemini_retention_seconds``), when both
reach the model's minimum (``gemini_min_tokens``: 1,024 tokens for the Flash models, 4,096 for
Pro). No write charges, no markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

Provider = Literal["anthropic", "openai", "google"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "google")
FIVE_MINUTES = 300
ONE_HOUR = 3600
THIRTY_MINUTES = 1800
TWELVE_HOURS = 43_200

# Minimum cacheable prompt length per Anthropic model (longest matching name prefix wins), from
# Anthropic's prompt-caching documentation as read on 2026-11-25. Overridable in settings.
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-sonnet-5-5": 1024,
    "claude-sonnet-5": 1024,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}


# Minimum prompt length for Gemini's implicit caching per model (longest matching name prefix
# wins), from Google's context-caching documentation as read on 2026-11-28. Overridable in
# settings; an unknown Gemini model gets the larger (Pro) minimum, so no hit is promised wrongly.
GEMINI_MIN_TOKENS: dict[str, int] = {
    "gemini-3-pro": 4096,
    "gemini-3.1-pro": 4096,
    "gemini-3-flash": 1024,
    "gemini-3.1-flash": 1024,
    "gemini-2.5-pro": 4096,
    "gemini-2.5-flash": 1024,
    "gemini-2.5-flash-lite": 1024,
}


def model_entry(table: Mapping[str, object], model: str) -> str | None:
    """The key of ``table`` that names ``model``: equal, or the longest key ``model`` starts with
    followed by ``-`` (dated snapshots such as ``claude-sonnet-4-5-20250929``)."""
    if model in table:
        return model
    matches = [key for key in table if model.startswith(key + "-")]
    return max(matches, key=len) if matches else None


@dataclass(frozen=True)
class CacheRules:
    anthropic_min_tokens: Mapping[str, int] = field(default_factory=lambda: dict(ANTHROPIC_MIN_TOKENS))
    anthropic_default_min_tokens: int = 1024
    lookback_blocks: int = 20
    max_breakpoints: int = 4
    openai_min_tokens: int = 1024
    openai_step_tokens: int = 128
    openai_retention_seconds: int = FIVE_MINUTES
    gemini_min_tokens: Mapping[str, int] = field(default_factory=lambda: dict(GEMINI_MIN_TOKENS))
    gemini_default_min_tokens: int = 4096
    gemini_retention_seconds: int = FIVE_MINUTES
    openai_max_breakpoints: int = 80
    openai_max_writes: int = 4

    def min_tokens(self, model: str) -> int:
        key = model_entry(self.anthropic_min_tokens, model)
        return self.anthropic_min_tokens[key] if key is not None else self.anthropic_default_min_tokens

    def retention_seconds(self, provider: str) -> int:
        """How long an OpenAI or Gemini prefix stays cached (Anthropic's TTLs are per marker)."""
        return self.gemini_retention_seconds if provider == "google" else self.openai_retention_seconds

    def gemini_minimum(self, model: str) -> int:
        key = model_entry(self.gemini_min_tokens, model)
        return self.gemini_min_tokens[key] if key is not None else self.gemini_default_min_tokens


@dataclass(frozen=True)
class CacheBlock:
    """One content block of a request. ``digest``/``tokens`` are cumulative through this block;
    ``breakpoint_ttl`` is the TTL in seconds of the ``cache_control`` it carries (None: none)."""

    digest: bytes
    tokens: int
    breakpoint_ttl: int | None = None


@dataclass(frozen=True)
class CacheRequest:
    provider: Provider
    model: str
    blocks: Sequence[CacheBlock]
    # Every input token of the request: the blocks plus the uncached tail after them.
    input_tokens: int
    # OpenAI GPT-5.6 and later with ``prompt_cache_options.mode == "explicit"``.
    explicit: bool = False


@dataclass(frozen=True)
class Forecast:
    provider: Provider
    model: str
    input_tokens: int
    cache_read_input_tokens: int
    cache_write_5m_input_tokens: int
    cache_write_1h_input_tokens: int
    uncached_input_tokens: int
    # Index in ``blocks`` of the end of the prefix read from the cache (None: nothing read).
    read_block: int | None = None
    # Anthropic: the entries this request wrote or refreshed, with their new expiry.
    touched: tuple[tuple[bytes, datetime], ...] = ()
    # OpenAI: whether the provider keeps this prompt for later ones (long enough to cache).
    retained: bool = False

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.cache_write_5m_input_tokens + self.cache_write_1h_input_tokens

    @property
    def hit(self) -> bool:
        return self.cache_read_input_tokens > 0

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "provider": self.provider,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_write_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.cache_write_1h_input_tokens,
            },
            "uncached_input_tokens": self.uncached_input_tokens,
            "hit": self.hit,
        }
        if self.provider == "openai":  # OpenAI's names: 30-minute and 12-hour writes
            out["cache_write_tokens"] = self.cache_creation_input_tokens
            out["cache_write_tokens_details"] = {
                "ttl_30m_tokens": self.cache_write_5m_input_tokens,
                "ttl_12h_tokens": self.cache_write_1h_input_tokens,
            }
        return out


# A retained OpenAI prompt as kept: ``(block index, cumulative digest through it)`` pairs in block
# order. A prompt the forecast saw whole has one per block; one read back from a render record has
# its fingerprint's checkpoints only (every block up to 1,024, one every ``stride`` beyond).
Checkpoints = Sequence[tuple[int, bytes]]


class CacheState:
    """The provider's cache as the forecast believes it: Anthropic entries (prefix digest →
    expiry) and OpenAI retained prompts (last use, their blocks' cumulative digests as
    :data:`Checkpoints`)."""

    def __init__(
        self,
        entries: Mapping[bytes, datetime] | None = None,
        prompts: Sequence[tuple[datetime, Checkpoints]] = (),
    ) -> None:
        self.entries: dict[bytes, datetime] = dict(entries or {})
        self.prompts: list[tuple[datetime, Checkpoints]] = list(prompts)

    def live(self, digest: bytes, now: datetime) -> bool:
        expires = self.entries.get(digest)
        return expires is not None and expires > now

    def touch(self, digest: bytes, expires: datetime) -> None:
        self.entries[digest] = max(expires, self.entries.get(digest, expires))


def _anthropic(request: CacheRequest, state: CacheState, now: datetime, rules: CacheRules) -> Forecast:
    blocks = request.blocks
    breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint_ttl is not None]
    if len(breakpoints) > rules.max_breakpoints:
        raise ValueError(f"{len(breakpoints)} cache breakpoints; the provider allows {rules.max_breakpoints}")
    minimum = rules.min_tokens(request.model)
    read_at: int | None = None
    for point in breakpoints:
        for j in range(point, max(-1, point - rules.lookback_blocks - 1), -1):
            if state.live(blocks[j].digest, now):
                read_at = j if read_at is None else max(read_at, j)
                break
    read = blocks[read_at].tokens if read_at is not None else 0
    write_1h = write_5m = 0
    written = read
    cacheable = [p for p in breakpoints if blocks[p].tokens >= minimum and (read_at is None or p > read_at)]
    hour = [p for p in cacheable if blocks[p].breakpoint_ttl == ONE_HOUR]
    if hour:
        write_1h = blocks[hour[-1]].tokens - written
        written = blocks[hour[-1]].tokens
    if cacheable:
        write_5m = max(0, blocks[cacheable[-1]].tokens - written)
    # What the request leaves in the cache: the hit refreshed, the written breakpoints new.
    touched: list[tuple[bytes, datetime]] = []
    if read_at is not None:
        ttl = _entry_ttl(blocks, read_at, breakpoints)
        touched.append((blocks[read_at].digest, now + timedelta(seconds=ttl)))
        # An earlier breakpoint's live entry is inside the prefix read: used, so refreshed too
        # (the system prompt's, typically: what a request after a compaction still reads).
        for point in breakpoints:
            if point < read_at and state.live(blocks[point].digest, now):
                ttl = blocks[point].breakpoint_ttl or FIVE_MINUTES
                touched.append((blocks[point].digest, now + timedelta(seconds=ttl)))
    for point in cacheable:
        ttl = blocks[point].breakpoint_ttl or FIVE_MINUTES
        touched.append((blocks[point].digest, now + timedelta(seconds=ttl)))
    uncached = max(0, request.input_tokens - read - write_1h - write_5m)
    return Forecast(
        provider="anthropic",
        model=request.model,
        input_tokens=request.input_tokens,
        cache_read_input_tokens=read,
        cache_write_5m_input_tokens=write_5m,
        cache_write_1h_input_tokens=write_1h,
        uncached_input_tokens=uncached,
        read_block=read_at,
        touched=tuple(touched),
    )


def _entry_ttl(blocks: Sequence[CacheBlock], at: int, breakpoints: Sequence[int]) -> int:
    """The TTL a hit at ``at`` is refreshed with: that of the first breakpoint at or after it."""
    return next((blocks[p].breakpoint_ttl or FIVE_MINUTES for p in breakpoints if p >= at), FIVE_MINUTES)


def _common_blocks(a: Checkpoints, b: Sequence[CacheBlock]) -> int:
    """Leading blocks two requests are known to share: up to the last checkpoint of ``a`` whose
    digest ``b`` has at the same block (cumulative digests: once different, different to the end;
    exact when ``a`` has every block, else short by less than its checkpoints' spacing)."""
    low, high = 0, len(a)
    while low < high:
        middle = (low + high) // 2
        index, digest = a[middle]
        if index < len(b) and b[index].digest == digest:
            low = middle + 1
        else:
            high = middle
    return a[low - 1][0] + 1 if low else 0


def _longest_retained_prefix(
    request: CacheRequest, state: CacheState, now: datetime, retention: timedelta
) -> tuple[int, int | None]:
    """Implicit prefix caching (OpenAI before GPT-5.6, Gemini): the tokens of the longest prefix
    ``request`` shares with a prompt still retained at ``now``, and the index of its last block."""
    blocks = request.blocks
    best = 0
    best_block: int | None = None
    for at, prompt in state.prompts:
        if now - at > retention:
            continue
        common = _common_blocks(prompt, blocks)
        if common and blocks[common - 1].tokens > best:
            best, best_block = blocks[common - 1].tokens, common - 1
    return best, best_block


def _openai(request: CacheRequest, state: CacheState, now: datetime, rules: CacheRules) -> Forecast:
    retention = timedelta(seconds=rules.openai_retention_seconds)
    best, best_block = _longest_retained_prefix(request, state, now, retention)
    cached = 0
    if request.input_tokens >= rules.openai_min_tokens and best >= rules.openai_min_tokens:
        steps = (best - rules.openai_min_tokens) // rules.openai_step_tokens
        cached = rules.openai_min_tokens + steps * rules.openai_step_tokens
    return Forecast(
        provider="openai",
        model=request.model,
        input_tokens=request.input_tokens,
        cache_read_input_tokens=cached,
        cache_write_5m_input_tokens=0,
        cache_write_1h_input_tokens=0,
        uncached_input_tokens=request.input_tokens - cached,
        read_block=best_block if cached else None,
        retained=request.input_tokens >= rules.openai_min_tokens,
    )


def _gemini(request: CacheRequest, state: CacheState, now: datetime, rules: CacheRules) -> Forecast:
    """Implicit caching: the longest prefix shared with a retained prompt, read whole once both
    reach the model's minimum; nothing written, nothing billed for it."""
    retention = timedelta(seconds=rules.gemini_retention_seconds)
    minimum = rules.gemini_minimum(request.model)
    best, best_block = _longest_retained_prefix(request, state, now, retention)
    cached = best if request.input_tokens >= minimum and best >= minimum else 0
    return Forecast(
        provider="google",
        model=request.model,
        input_tokens=request.input_tokens,
        cache_read_input_tokens=cached,
        cache_write_5m_input_tokens=0,
        cache_write_1h_input_tokens=0,
        uncached_input_tokens=request.input_tokens - cached,
        read_block=best_block if cached else None,
        retained=request.input_tokens >= minimum,
    )


def _openai_explicit(request: CacheRequest, state: CacheState, now: datetime, rules: CacheRules) -> Forecast:
    blocks = request.blocks
    marked = [i for i, block in enumerate(blocks) if block.breakpoint_ttl is not None]
    looked_up = marked[-rules.openai_max_breakpoints :] if rules.openai_max_breakpoints else []
    read_at = next((p for p in reversed(looked_up) if state.live(blocks[p].digest, now)), None)
    read = blocks[read_at].tokens if read_at is not None else 0
    writes = [
        p
        for p in marked[-rules.openai_max_writes :]
        if blocks[p].tokens >= rules.openai_min_tokens and (read_at is None or p > read_at)
    ]
    long_ = [p for p in writes if blocks[p].breakpoint_ttl == TWELVE_HOURS]
    write_long = write_short = 0
    written = read
    if long_:
        write_long = blocks[long_[-1]].tokens - written
        written = blocks[long_[-1]].tokens
    if writes:
        write_short = max(0, blocks[writes[-1]].tokens - written)
    touched: list[tuple[bytes, datetime]] = []
    if read_at is not None:
        # The prefix read holds the earlier breakpoints' prefixes: their live entries are used too.
        for point in looked_up:
            if point <= read_at and (point == read_at or state.live(blocks[point].digest, now)):
                ttl = blocks[point].breakpoint_ttl or THIRTY_MINUTES
                touched.append((blocks[point].digest, now + timedelta(seconds=ttl)))
    for point in writes:
        ttl = blocks[point].breakpoint_ttl or THIRTY_MINUTES
        touched.append((blocks[point].digest, now + timedelta(seconds=ttl)))
    return Forecast(
        provider="openai",
        model=request.model,
        input_tokens=request.input_tokens,
        cache_read_input_tokens=read,
        cache_write_5m_input_tokens=write_short,
        cache_write_1h_input_tokens=write_long,
        uncached_input_tokens=max(0, request.input_tokens - read - write_short - write_long),
        read_block=read_at,
        touched=tuple(touched),
    )


def forecast_usage(*, request: CacheRequest, state: CacheState, now: datetime, rules: CacheRules) -> Forecast:
    """The forecast for ``request`` sent at ``now`` into the cache ``state`` (not changed)."""
    if request.provider == "google":
        return _gemini(request, state, now, rules)
    if request.provider == "openai" and request.explicit:
        return _openai_explicit(request, state, now, rules)
    if request.provider == "openai":
        return _openai(request, state, now, rules)
    return _anthropic(request, state, now, rules)


def apply_forecast(state: CacheState, request: CacheRequest, forecast: Forecast, now: datetime) -> None:
    """What the request leaves in the cache, applied to ``state``."""
    for digest, expires in forecast.touched:
        state.touch(digest, expires)
    if forecast.retained:
        state.prompts.append((now, list(enumerate(block.digest for block in request.blocks))))


def replay(requests: Sequence[tuple[datetime, CacheRequest]], *, rules: CacheRules) -> list[Forecast]:
    """Each request's forecast after the ones before it (same provider; oldest first)."""
    states: dict[str, CacheState] = {}
    forecasts: list[Forecast] = []
    for at, request in requests:
        state = states.setdefault(request.provider, CacheState())
        forecast = forecast_usage(request=request, state=state, now=at, rules=rules)
        apply_forecast(state, request, forecast, at)
        forecasts.append(forecast)
    return forecasts
