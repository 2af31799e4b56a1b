"""Render one visible window (DESIGN §4 steps 4-6): filters, cache points, parts, tail.

The caller has already pruned (TTL), compacted and sliced the window from the latest summary;
hidden blocks carry their replacement text. Pure and byte-stable: no clock, sorted JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import SUMMARY, THINKING, TURN_HEADER, USER_PROMPT, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.thinking import is_own_thinking, readable_text, renders_in
from timeline_app.domain.tokens import count_text_tokens

from .cache_plan import marker_style
from .cache_points import cache_point_indices
from .continued_header import with_continued_header
from .formats import (
    FORMATS,
    Format,
    Part,
    Source,
    announce_text,
    anthropic_part,
    block_parts,
    budget_note_text,
    debug_text,
    openai_messages,
    sources_pool_text,
)
from .native import CONTINUED, NATIVE_FORMATS, render_native
from .prefix import Prefix, build_prefix, segment_key

NEVER_FILTERED = frozenset({TURN_HEADER, USER_PROMPT, SUMMARY})


@dataclass(frozen=True)
class RenderOptions:
    format: Format = "anthropic"
    include_sources: bool = False
    include_announce: bool = False
    cache_last: bool = True
    exclude_contributions: tuple[str, ...] = ()
    include_only_contributions: tuple[str, ...] = ()
    announce: tuple[str, ...] = ()
    # Native formats only: the system prompt's text (Anthropic: the top-level ``system``; OpenAI:
    # ``instructions`` or a first system message) and the ``prompt_cache_key`` suggestion.
    system_text: str = ""
    prompt_cache_key: str = ""
    # Native formats: keep the model's message last when the history ends with it (else
    # ``anthropic_messages`` and ``gemini_contents`` end with a user message of ``continue_text``).
    prefill: bool = False
    # OpenAI formats: the cache TTLs of the call's model when it takes explicit cache breakpoints
    # (GPT-5.6 and later, from the price table; ``("30m", "12h")``); empty: it takes none.
    cache_breakpoint_ttls: tuple[str, ...] = ()
    # The budget line at the tail's end (None: the conversation's ``budget_note`` setting).
    budget_note: bool | None = None
    # OpenAI explicit breakpoints: the last stable index of the prefix the request reads from
    # the cache, as the usage forecast says (``cache_plan.choose_slots``); None: not known.
    cache_read_through: int | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; expected one of {', '.join(FORMATS)}")


@dataclass(frozen=True)
class Rendered:
    """``blocks`` are content parts (anthropic, text) or chat messages (openai).

    ``cache_points`` are indices into ``blocks`` of the parts carrying ``cache_control``;
    ``marked_seqs`` the seqs of the stored blocks those parts belong to.
    """

    blocks: list[dict[str, Any]]
    cache_points: list[int]
    tokens: dict[str, int]
    debug: str | None = None
    marked_seqs: list[int] = field(default_factory=list)
    # The cacheable prefix's fingerprint (``prefix.py``): what the cache explainer compares.
    prefix: Prefix = field(default_factory=Prefix)
    # Native formats: the SDK call's keyword arguments (``blocks`` is its message list), and how
    # it ends (``native.ENDINGS``: ``user``, ``continue_text``, ``prefill``, ``assistant``).
    request: dict[str, Any] | None = None
    ending: str | None = None
    # Native formats with markers: per prefix segment, the request's tokens through its content,
    # and the whole request's (``usage/request_tokens.py``): what the usage forecast counts.
    request_through: tuple[int, ...] = ()
    request_tokens: int | None = None


def filter_contributions(
    blocks: Sequence[Block],
    *,
    exclude: Sequence[str] = (),
    include_only: Sequence[str] = (),
) -> list[Block]:
    """Seed 000 "Contribution Filters", applied to history and current turn alike.

    ``exclude`` drops matching types; a non-empty ``include_only`` keeps only matching types.
    Turn headers, user prompts and summaries are never filtered.
    """
    excluded = set(exclude)
    only = set(include_only)
    kept: list[Block] = []
    for block in blocks:
        if block.type not in NEVER_FILTERED:
            if block.type in excluded:
                continue
            if only and block.type not in only:
                continue
        kept.append(block)
    return kept


def tail_texts(
    *,
    options: RenderOptions,
    sources: Sequence[Source] = (),
    active_plan: Block | None = None,
) -> list[str]:
    """The uncached tail: the sources pool, then announce; empty sections are left out."""
    texts: list[str] = []
    if options.include_sources and sources:
        texts.append(sources_pool_text(sources))
    if options.include_announce:
        announce = announce_text(options.announce, active_plan)
        if announce:
            texts.append(announce)
    return [t for t in texts if t]


def _as_rendered(block: Block, format: str) -> Block:
    """A block as ``format`` renders it: another provider's thinking block costs its readable
    text only (its opaque parts are left out)."""
    if block.type != THINKING or is_own_thinking(block, format):
        return block
    return replace(block, tokens=count_text_tokens(readable_text(block)))


def _through(through: dict[int, int], count: int, start: int) -> tuple[int, ...]:
    """Per stable block, the request's tokens through its content (a block without content: those
    through the one before)."""
    if not through:
        return ()
    out: list[int] = []
    for index in range(count):
        start = through.get(index, start)
        out.append(start)
    return tuple(out)


def render_window(
    blocks: Sequence[Block],
    *,
    settings: RenderSettings,
    options: RenderOptions,
    sources: Sequence[Source] = (),
    active_plan: Block | None = None,
    system_tokens: int = 0,
    max_tokens: int | None = None,
    prefix_seed: str = "",
) -> Rendered:
    """Render the visible window in ``options.format``.

    Steps: the continued header of a window that starts mid-turn → contribution filters → cache points on the stable stream → parts (the marker sits
    on the last emitted part of each cache-point block) → tail (never cached).

    A thinking block (``react.thinking``) is in the stable stream whole in its provider's native
    format, as its readable text in the other native formats (``domain.thinking.renders_in``); the
    seed formats leave it out, so it costs nothing there (``tokens.visible``), is no cache point
    and no part.
    """
    stable = [
        _as_rendered(block, options.format)
        for block in filter_contributions(
            with_continued_header(blocks),
            exclude=options.exclude_contributions,
            include_only=options.include_only_contributions,
        )
        if renders_in(block, options.format)
    ]
    tail, tokens = _tail_and_tokens(
        stable,
        settings=settings,
        options=options,
        tail=tail_texts(options=options, sources=sources, active_plan=active_plan),
        system_tokens=system_tokens,
        max_tokens=max_tokens,
    )
    seed = f"{options.format}|{system_tokens}|{prefix_seed}"
    if options.format in NATIVE_FORMATS:
        return _render_native(
            stable, tail, tokens, settings=settings, options=options, system_tokens=system_tokens, seed=seed
        )
    if options.format == "openai":
        return _render_openai(stable, tail, tokens, seed=seed)
    return _render_parts(stable, tail, tokens, settings=settings, options=options, seed=seed)


def _tail_and_tokens(
    stable: list[Block],
    *,
    settings: RenderSettings,
    options: RenderOptions,
    tail: list[str],
    system_tokens: int,
    max_tokens: int | None,
) -> tuple[list[str], dict[str, int]]:
    """The tail with the budget line when asked for (it counts everything before it), and the
    render's token totals."""
    visible_tokens = sum(b.effective_tokens for b in stable)
    tail_tokens = sum(count_text_tokens(t) for t in tail)
    ceiling = settings.max_tokens if max_tokens is None else max_tokens
    if settings.budget_note if options.budget_note is None else options.budget_note:
        note = budget_note_text(
            context_tokens=system_tokens + visible_tokens + tail_tokens,
            max_tokens=ceiling,
            compaction_at=settings.compaction_limit,
        )
        tail = [*tail, note]
        tail_tokens += count_text_tokens(note)
    tokens = {
        "system": system_tokens,
        "visible": visible_tokens,
        "tail": tail_tokens,
        "total": system_tokens + visible_tokens + tail_tokens,
        "max_tokens": ceiling,
    }
    return tail, tokens


def _render_native(
    stable: list[Block],
    tail: list[str],
    tokens: dict[str, int],
    *,
    settings: RenderSettings,
    options: RenderOptions,
    system_tokens: int,
    seed: str,
) -> Rendered:
    """A provider's own request (``native``): its messages, markers and keyword arguments."""
    native = render_native(
        stable,
        format=options.format,
        tail=tail,
        points=cache_point_indices(stable, settings=settings, cache_last=options.cache_last),
        system_text=options.system_text,
        system_tokens=system_tokens,
        cache_min_tokens=settings.cache_min_tokens,
        cache_ttl_seconds=settings.cache_ttl_seconds,
        prompt_cache_key=options.prompt_cache_key,
        continue_text=settings.continue_text,
        prefill=options.prefill,
        cache_style=marker_style(options.format, options.cache_breakpoint_ttls),
        read_through=options.cache_read_through,
    )
    if native.ending == CONTINUED:
        extra = count_text_tokens(settings.continue_text)
        tokens["tail"] += extra
        tokens["total"] += extra
    keyed = [(b, segment_key(b, block_text(b)), native.item_of.get(i, 0)) for i, b in enumerate(stable)]
    return Rendered(
        blocks=native.items,
        cache_points=native.cache_points,
        tokens=tokens,
        marked_seqs=native.marked_seqs,
        prefix=build_prefix(seed, keyed),
        request=native.request,
        ending=native.ending,
        request_through=_through(native.through, len(stable), system_tokens),
        request_tokens=native.request_tokens,
    )


def _render_openai(stable: list[Block], tail: list[str], tokens: dict[str, int], *, seed: str) -> Rendered:
    """Chat messages; OpenAI caches prefixes by itself: no markers, no cache points."""
    positions: list[int] = []
    messages = openai_messages([*stable, *(Part(kind="text", text=t) for t in tail)], positions)
    keyed = [(b, segment_key(b, block_text(b)), positions[i]) for i, b in enumerate(stable)]
    return Rendered(blocks=messages, cache_points=[], tokens=tokens, prefix=build_prefix(seed, keyed))


def _render_parts(
    stable: list[Block],
    tail: list[str],
    tokens: dict[str, int],
    *,
    settings: RenderSettings,
    options: RenderOptions,
    seed: str,
) -> Rendered:
    """The seed formats' content parts (``anthropic``, ``text``), the marker on the last part of
    each cache-point block; ``text`` with its debug stream."""
    points = set(cache_point_indices(stable, settings=settings, cache_last=options.cache_last))
    with_binary = options.format == "anthropic"
    out: list[dict[str, Any]] = []
    cache_points: list[int] = []
    marked: list[int] = []
    segments: list[tuple[Block, bytes, int]] = []
    for index, block in enumerate(stable):
        parts = block_parts(block)
        segments.append((block, segment_key(block, parts[0].text), len(out)))
        for position, part in enumerate(parts):
            cached = index in points and position == len(parts) - 1
            out.append(anthropic_part(part, cached=cached, binary=with_binary))
            if cached:
                cache_points.append(len(out) - 1)
                marked.append(block.seq)
    out.extend(anthropic_part(Part(kind="text", text=t), binary=with_binary) for t in tail)

    debug = debug_text(out, cache_points) if options.format == "text" else None
    return Rendered(
        blocks=out,
        cache_points=cache_points,
        tokens=tokens,
        debug=debug,
        marked_seqs=marked,
        prefix=build_prefix(seed, segments),
    )
