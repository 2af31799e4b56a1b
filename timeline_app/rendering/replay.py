"""Render a recorded render again, from the stored blocks and what its record kept (pure).

A render record keeps the fingerprint of its cacheable prefix (``prefix.py``: a cumulative digest
and the seq of each segment), the seqs of the blocks hidden at that moment and its inputs (the
resolved settings, the format, the contribution filters, the system prompt's digest). Blocks are
append-only and change only their hide state, so the same blocks, with the recorded hide state,
through the same pure ``render_window``, give the same context — and the recomputed fingerprint
says whether they did: equal digests, segment for segment, mean the reconstruction is exact. What
is not part of the fingerprint (the uncached tail: sources pool and announce) is named, not
guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .blocks import Block
from .formats import FORMATS, Format
from .pipeline import Rendered, RenderOptions, render_window
from .prefix import DIGEST_BYTES, unpack_seqs
from .settings import RenderSettings

INPUTS_VERSION = 1
_FORMATS: tuple[Format, ...] = ("anthropic", "openai", "text")


def render_inputs(*, settings: RenderSettings, options: RenderOptions, system_digest: str) -> dict[str, Any]:
    """What a record keeps of a render's inputs (JSON)."""
    return {
        "version": INPUTS_VERSION,
        "settings": asdict(settings),
        "format": options.format,
        "cache_last": options.cache_last,
        "exclude": sorted(options.exclude_contributions),
        "include_only": sorted(options.include_only_contributions),
        "include_sources": options.include_sources,
        "include_announce": options.include_announce,
        "system_digest": system_digest,
    }


@dataclass(frozen=True)
class Recorded:
    """The parts of a render record the replay reads."""

    segment_digests: bytes
    segment_seqs: bytes
    hidden_seqs: bytes
    hidden_count: int
    cache_points: list[int]
    system_tokens: int
    prefix_tokens: int
    inputs: dict[str, Any]


@dataclass(frozen=True)
class Replay:
    rendered: Rendered | None
    exact: bool
    options: RenderOptions | None = None
    # What could not be reconstructed, or where the reconstruction differs, in words.
    problems: list[str] = field(default_factory=list)
    # Inputs not recorded (renders before migration 0010) and taken from today's state instead.
    assumed: list[str] = field(default_factory=list)
    segment_count: int = 0


def window_seqs(recorded: Recorded) -> list[int]:
    """The seqs of the stored blocks the render's prefix was made of, in render order (a continued
    turn header shares its seq with the block after it: once)."""
    seen: set[int] = set()
    ordered = []
    for seq in unpack_seqs(recorded.segment_seqs):
        if seq not in seen:
            seen.add(seq)
            ordered.append(seq)
    return ordered


def _settings(raw: Any) -> RenderSettings | None:
    if not isinstance(raw, dict):
        return None
    known = {f.name for f in fields(RenderSettings)}
    if set(raw) - known:
        return None
    try:
        return replace(RenderSettings(), **raw)
    except (TypeError, ValueError):
        return None


def _options(inputs: dict[str, Any]) -> RenderOptions:
    return RenderOptions(
        format=inputs["format"],
        cache_last=bool(inputs.get("cache_last", True)),
        exclude_contributions=tuple(inputs.get("exclude") or ()),
        include_only_contributions=tuple(inputs.get("include_only") or ()),
    )


def _first_difference(recorded: Recorded, rendered: Rendered) -> int | None:
    want = recorded.segment_digests
    got = rendered.prefix.digests
    count = max(len(want) // DIGEST_BYTES, len(got))
    for i in range(count):
        if i >= len(got) or want[i * DIGEST_BYTES : (i + 1) * DIGEST_BYTES] != got[i]:
            return i
    return None


def _check(recorded: Recorded, rendered: Rendered) -> list[str]:
    problems = []
    diff = _first_difference(recorded, rendered)
    if diff is not None:
        paths = rendered.prefix.paths
        where = f" ({paths[diff]})" if diff < len(paths) else ""
        problems.append(
            f"the prefix fingerprint differs from segment {diff + 1}{where} on "
            f"({len(rendered.prefix.digests)} segments rebuilt, "
            f"{len(recorded.segment_digests) // DIGEST_BYTES} recorded)"
        )
    if sorted(rendered.cache_points) != sorted(recorded.cache_points):
        problems.append(
            f"the cache points differ: recorded {recorded.cache_points}, rebuilt {rendered.cache_points}"
        )
    return problems


def replay(
    blocks: Sequence[Block],
    recorded: Recorded,
    *,
    today_settings: RenderSettings,
    today_hidden: frozenset[int],
) -> Replay:
    """Render ``blocks`` (the stored blocks of ``window_seqs(recorded)``, in that order) as the
    recorded render did. A record without inputs (before migration 0010) is replayed with
    ``today_settings``, each format in turn, no filters, no system prompt digest, and — when it
    had hidden blocks — ``today_hidden``; the fingerprint still decides whether that was exact."""
    wanted = window_seqs(recorded)
    by_seq = {block.seq: block for block in blocks}
    missing = [seq for seq in wanted if seq not in by_seq]
    if missing:
        return Replay(
            None, False, problems=[f"stored blocks missing: seq {', '.join(map(str, missing[:20]))}"]
        )
    inputs = recorded.inputs if isinstance(recorded.inputs, dict) else {}
    assumed: list[str] = []
    if inputs.get("version") == INPUTS_VERSION:
        hidden = frozenset(unpack_seqs(recorded.hidden_seqs))
        settings = _settings(inputs.get("settings"))
        if settings is None or inputs.get("format") not in FORMATS:
            return Replay(None, False, problems=["the recorded settings are not readable any more"])
        candidates = [(_options(inputs), str(inputs.get("system_digest") or ""))]
    else:
        assumed.append("settings, format and contribution filters (today's settings, each format tried)")
        if recorded.system_tokens:
            assumed.append("the system prompt's digest (none assumed)")
        if recorded.hidden_count:
            assumed.append("which blocks were hidden (today's hide state assumed)")
            hidden = today_hidden
        else:
            hidden = frozenset()
        settings = today_settings
        candidates = [(RenderOptions(format=name), "") for name in _FORMATS]
    window = [replace(by_seq[seq], hidden=seq in hidden) for seq in wanted]
    best: Replay | None = None
    for options, digest in candidates:
        rendered = render_window(
            window,
            settings=settings,
            options=options,
            system_tokens=recorded.system_tokens,
            prefix_seed=digest,
        )
        problems = _check(recorded, rendered)
        result = Replay(rendered, not problems, options, problems, assumed, len(rendered.prefix.digests))
        if result.exact:
            return result
        best = best or result
    assert best is not None
    return best
