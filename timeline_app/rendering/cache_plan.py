"""One cache planner (pure): where the prompt-cache boundaries are, and each provider's markers.

*Where* is decided once, by the seed's rules (``cache_points.py``): the stable head (the system
prompt), the previous turn, the pre-tail round and the tail. A provider whose cache matches only
at a breakpoint it has seen before (OpenAI GPT-5.6 and later: exact match, no lookback) needs
each request to repeat the previous requests' breakpoints, so its boundaries are the seed's points
as every earlier request of the window had them (:func:`earlier_points`): each earlier request's
tail (the end of every user message the assistant answered, :func:`request_ends`), its previous
turn (the end of every turn) and its pre-tail (the end of every round). Appending never moves
those, so the next request carries the last one's.

*How* is one :class:`MarkerStyle` per provider: the key a marker goes under on a content part,
the marker itself, the request-level fields it needs, and how many markers one request may carry.
:func:`choose_slots` maps the boundaries onto the parts that can carry a marker (each boundary on
the nearest markable part at or before it), drops those whose prefix is below the minimum
cacheable length, and keeps the latest ``max_markers`` (the head's marker counted). A format only
says which parts are markable (:class:`Slot`) and writes the chosen markers.

Each native format has its style (:func:`marker_style`): ``anthropic_messages`` :data:`ANTHROPIC`,
``openai_responses`` / ``openai_chat`` :func:`openai_explicit` for a model that takes breakpoints
(GPT-5.6 and later) else :data:`NO_MARKERS`, ``gemini_contents`` :data:`GEMINI` (implicit caching
only: no marker, no request field; its usage forecast reads the longest prefix a retained prompt
shares at any content part, as Gemini matches prefixes, not breakpoints). A fifth provider is one
more :class:`MarkerStyle`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from timeline_app.domain.blocks import TURN_HEADER, Block, is_turn_start
from timeline_app.domain.settings import RenderSettings

from .cache_points import assign_rounds, cache_point_indices

ONE_HOUR = 3600
OPENAI_TTL_SECONDS = {"30m": 1800, "12h": 43_200}


@dataclass(frozen=True)
class MarkerStyle:
    """One provider's cache markers.

    ``field``: the key of the marker on a content part (empty: the provider takes none);
    ``max_markers``: markers one request may carry, the head's included; ``repeat_requests``:
    the cache matches only at breakpoints a request carries (no lookback), so every earlier
    request's boundaries are kept; ``ttls``: the marker TTLs the model allows (OpenAI)."""

    provider: str
    field: str
    max_markers: int
    repeat_requests: bool = False
    ttls: tuple[str, ...] = ()

    def ttl_name(self, ttl_seconds: int) -> str:
        """The marker TTL for the ``cache_ttl_seconds`` setting."""
        if self.provider == "anthropic":
            return "1h" if ttl_seconds >= ONE_HOUR else "5m"
        return "12h" if ttl_seconds >= ONE_HOUR and "12h" in self.ttls else "30m"

    def marker(self, ttl_seconds: int) -> dict[str, Any]:
        if not self.field:
            return {}
        if self.provider == "anthropic":
            if ttl_seconds >= ONE_HOUR:
                return {"type": "ephemeral", "ttl": "1h"}
            return {"type": "ephemeral"}
        # OpenAI: the breakpoints inherit the request's ``prompt_cache_options.ttl``.
        return {"mode": "explicit"}

    def request_fields(self, ttl_seconds: int) -> dict[str, Any]:
        """Top-level fields of the request (never beside the deprecated
        ``prompt_cache_retention``)."""
        if self.provider == "openai":
            return {"prompt_cache_options": {"mode": "explicit", "ttl": self.ttl_name(ttl_seconds)}}
        return {}

    def marker_ttl_seconds(self, ttl_seconds: int) -> int:
        """How long an entry a marker writes lives (the forecast's breakpoint TTL)."""
        if self.provider == "anthropic":
            return ONE_HOUR if ttl_seconds >= ONE_HOUR else 300
        return OPENAI_TTL_SECONDS[self.ttl_name(ttl_seconds)]


# Anthropic: at most 4 ``cache_control`` per request (system included), 20-block lookback.
ANTHROPIC = MarkerStyle(provider="anthropic", field="cache_control", max_markers=4)
# Implicit caching only (no markers): what OpenAI models before GPT-5.6 get.
NO_MARKERS = MarkerStyle(provider="none", field="", max_markers=0)
# Gemini: implicit caching only (a repeated prefix from the model's minimum on), no marker.
GEMINI = MarkerStyle(provider="google", field="", max_markers=0)
# OpenAI's reads consider a request's latest 80 breakpoints (it writes the latest four).
OPENAI_MAX_BREAKPOINTS = 80
OPENAI_MAX_WRITES = 4


def openai_explicit(ttls: Sequence[str]) -> MarkerStyle:
    """GPT-5.6 and later: ``prompt_cache_breakpoint`` on input content parts, exact match."""
    return MarkerStyle(
        provider="openai",
        field="prompt_cache_breakpoint",
        max_markers=OPENAI_MAX_BREAKPOINTS,
        repeat_requests=True,
        ttls=tuple(ttls) or ("30m",),
    )


def marker_style(format: str, breakpoint_ttls: Sequence[str] = ()) -> MarkerStyle:
    """The markers of a native ``format`` for a model whose explicit cache TTLs are
    ``breakpoint_ttls`` (the price table's ``cache_ttls``: OpenAI GPT-5.6 and later; empty for
    every other model)."""
    if format == "anthropic_messages":
        return ANTHROPIC
    if format == "gemini_contents":
        return GEMINI
    if format in ("openai_responses", "openai_chat") and breakpoint_ttls:
        return openai_explicit(breakpoint_ttls)
    return NO_MARKERS


@dataclass(frozen=True)
class Slot:
    """A content part that can carry a marker: ``at`` its place in the request (sortable),
    ``tokens`` the prompt's tokens through it, ``seq`` the stored block whose content it ends."""

    at: tuple[Any, ...]  # sortable: (message, part) or (item, key, part)
    tokens: int
    seq: int


@dataclass(frozen=True)
class Plan:
    """The chosen markers: whether the head (system prompt) carries one, and the slots."""

    head: bool
    slots: list[Slot] = field(default_factory=list)


def request_ends(message_of: Mapping[int, int], roles: Sequence[str]) -> list[int]:
    """Stable indices that end an earlier model call: the last block of each user message the
    assistant answered (``message_of``: stable index → its message; ``roles``: each message's)."""
    last: dict[int, int] = {}
    for index, message in message_of.items():
        if index > last.get(message, -1):
            last[message] = index
    return sorted(
        index
        for message, index in last.items()
        if roles[message] == "user" and message + 1 < len(roles) and roles[message + 1] == "assistant"
    )


def earlier_points(stable: Sequence[Block]) -> list[int]:
    """The previous-turn and pre-tail points of every earlier request: the last block of every
    turn followed by another, and every block followed by one of another round (where a round
    ended in some earlier request: the last block of a round is either followed by a block of
    another round or the end of that request). Both depend only on a block and the next, so
    appending never moves one."""
    rounds = assign_rounds(stable)
    points: list[int] = []
    for index in range(1, len(stable)):
        block, before = stable[index], stable[index - 1]
        new_turn = is_turn_start(block) and (block.turn_id != before.turn_id or block.type == TURN_HEADER)
        if new_turn or rounds[index] != rounds[index - 1]:
            points.append(index - 1)
    return points


def boundaries(
    stable: Sequence[Block],
    *,
    settings: RenderSettings,
    cache_last: bool = True,
    style: MarkerStyle = ANTHROPIC,
    earlier_requests: Sequence[int] = (),
) -> list[int]:
    """Stable indices where a cache boundary is: the seed's points, and for a provider that
    matches only at repeated breakpoints every earlier request's too (``earlier_requests``: their
    tails, :func:`request_ends`)."""
    points = cache_point_indices(stable, settings=settings, cache_last=cache_last)
    if not style.repeat_requests:
        return points
    return sorted({*points, *earlier_requests, *earlier_points(stable)})


def spread(slots: list[Slot], indices: Sequence[int], read_through: int) -> list[Slot]:
    """``slots`` (at stable ``indices``) with at most ``OPENAI_MAX_WRITES`` past ``read_through``:
    the last, and the ones nearest to a quarter, a half and three quarters of the stretch's
    tokens."""
    after = [k for k, index in enumerate(indices) if index > read_through]
    if len(after) <= OPENAI_MAX_WRITES:
        return slots
    start = slots[after[0] - 1].tokens if after[0] > 0 else 0
    end = slots[after[-1]].tokens
    keep = {after[-1]}
    for quarter in (1, 2, 3):
        target = start + (end - start) * quarter / 4
        keep.add(min(after[:-1], key=lambda k: abs(slots[k].tokens - target)))
    return [slot for k, slot in enumerate(slots) if k not in after or k in keep]


def choose_slots(
    points: Sequence[int],
    markable: Mapping[int, tuple[Any, ...]],
    count: int,
    *,
    tokens: Callable[[int], int],
    seq: Callable[[int], int],
    style: MarkerStyle,
    head_tokens: int,
    min_tokens: int,
    read_through: int | None = None,
) -> Plan:
    """The markers for boundaries ``points`` (stable indices, ascending) over ``count`` stable
    blocks: ``markable`` maps a block's index to the place (sortable) of its last part that can
    carry a marker; ``tokens(i)`` is the prompt's tokens through block ``i``, ``seq(i)`` its seq.
    Each point goes on the nearest markable part at or before it, once; none below
    ``min_tokens``; the head's marker first, then the latest slots up to ``style.max_markers``.
    (Only the chosen parts become :class:`Slot` values: the loop is the render's hot path.)

    ``read_through`` (OpenAI explicit breakpoints): the last stable index of the prefix this
    request reads from the cache (-1: the head at most), as the usage forecast says. The provider
    writes a request's latest ``OPENAI_MAX_WRITES`` breakpoints, and only past the read point;
    when more slots than that lie past it (a hide or a compaction rewrote a long stretch), the
    ones between would stay unwritten for good (later requests read past them), so this request
    keeps only :func:`spread` of them: three spread evenly by tokens over the stretch, and its
    last. The next request carries all of them again; only the written ones can hit."""
    if not style.field:
        return Plan(head=False)
    head = head_tokens > 0 and head_tokens >= max(min_tokens, 1)
    wanted = set(points)
    chosen: list[int] = []
    best = -1
    best_at: tuple[Any, ...] | None = None
    last_at: tuple[Any, ...] | None = None
    for index in range(count):
        at = markable.get(index)
        if at is not None and (best_at is None or at > best_at):
            best, best_at = index, at
        if index in wanted and best_at is not None and (last_at is None or last_at < best_at):
            chosen.append(best)
            last_at = best_at
    kept = [Slot(at=markable[i], tokens=tokens(i), seq=seq(i)) for i in chosen]
    kept = [slot for slot in kept if slot.tokens >= min_tokens]
    if read_through is not None and style.repeat_requests:
        kept = spread(kept, [i for i in chosen if tokens(i) >= min_tokens], read_through)
    budget = max(0, style.max_markers - head)
    return Plan(head=head, slots=kept[max(0, len(kept) - budget) :] if budget else [])
