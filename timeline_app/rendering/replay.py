"""Render a recorded render again, from the stored blocks and what its record kept (pure).

Blocks are append-only and change only their hide state, so the blocks a render saw, with the hide
state they had, through the same pure ``render_window`` with the same inputs, give the same
context; the recomputed fingerprint (``prefix.Prefix.fingerprint``) says whether they did.

What a record keeps for this, besides its bounded fingerprint (``prefix.py``: 16 KiB at most):

* the window's bounds (``WindowShape``): the summary it starts with (``summary_seq``), the lowest
  and highest seq of its other blocks, and the seqs in between that were not in it (popped
  messages, summaries, messages a compaction strategy left out): a window is those blocks, in seq
  order, after its summary;
* the seqs hidden in it at that moment (manual hides, TTL prunes; the summary's too);
* its inputs (``recorded_inputs.render_inputs``: resolved settings, format, contribution
  filters, the system prompt's digest).

The two seq sets are packed by ``pack_seq_set`` (ascending deltas as varints, deflated when that is
smaller): at most 1 byte a seq while the gaps between them are under 128 (2 under 16,384), and a
run of consecutive seqs deflates to almost nothing. So a record costs 16 KiB at most plus about
1–2 bytes per hidden or left-out block of its window — 0 for a window with none, whatever its size.

The replay compares checkpoint by checkpoint: exact means every recorded checkpoint (its cumulative
digest and its chunk's seq digest), the seed, the segment count and the cache points are equal;
otherwise it names the first differing chunk, its segments and its first block's path. What is not
part of the fingerprint (the uncached tail: sources pool and announce) is named, not guessed.
Records from before (no window bounds, no inputs) are replayed with what can be assumed from
today's state, and say so (``Replay.assumed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from timeline_app.domain.blocks import Block
from timeline_app.domain.settings import RenderSettings

from .formats import FORMATS, Format
from .pipeline import Rendered, RenderOptions, render_window
from .prefix import DIGEST_BYTES, LEGACY_STRIDE, Prefix, checkpoint_position, chunk_seq_digest, unpack_seqs
from .recorded_inputs import INPUTS_VERSION, read_options, read_settings
from .window_shape import WindowShape, shown_since, window_of

_FORMATS: tuple[Format, ...] = ("anthropic", "openai", "text")
# ---------------------------------------------------------------- the record and the replay


@dataclass(frozen=True)
class Recorded:
    """The parts of a render record the replay reads."""

    segment_count: int
    segment_stride: int
    segment_digests: bytes
    segment_seqs: bytes
    segment_seed: bytes
    cache_points: list[int]
    system_tokens: int
    prefix_tokens: int
    inputs: dict[str, Any]
    hidden_count: int
    # ``None`` for records written before the window's shape was kept (migration 0013).
    window: WindowShape | None = None


@dataclass(frozen=True)
class Replay:
    rendered: Rendered | None
    exact: bool
    options: RenderOptions | None = None
    # What could not be reconstructed, or where the reconstruction differs, in words.
    problems: list[str] = field(default_factory=list)
    # Inputs not recorded (renders before migration 0013) and taken from today's state instead.
    assumed: list[str] = field(default_factory=list)
    segment_count: int = 0


def legacy_window_seqs(recorded: Recorded) -> list[int]:
    """The seqs of a legacy record's prefix blocks (``segment_stride`` 0 keeps one per segment),
    in render order (a continued turn header shares its seq with the block after it: once)."""
    seen: set[int] = set()
    ordered = []
    for seq in unpack_seqs(recorded.segment_seqs):
        if seq not in seen:
            seen.add(seq)
            ordered.append(seq)
    return ordered


def _legacy_difference(recorded: Recorded, prefix: Prefix) -> str | None:
    """A stride-0 record: a digest per segment."""
    want, got = recorded.segment_digests, prefix.digests
    count = max(len(want) // DIGEST_BYTES, len(got))
    for i in range(count):
        if i >= len(got) or want[i * DIGEST_BYTES : (i + 1) * DIGEST_BYTES] != got[i]:
            where = f" ({prefix.paths[i]})" if i < len(prefix.paths) else ""
            return (
                f"the prefix fingerprint differs from segment {i + 1}{where} on "
                f"({len(got)} segments rebuilt, {len(want) // DIGEST_BYTES} recorded)"
            )
    return None


def first_difference(recorded: Recorded, prefix: Prefix) -> str | None:
    """Where the rebuilt prefix first differs from the recorded fingerprint, in words; ``None``
    when every checkpoint, the seed and the segment count are equal."""
    if recorded.segment_stride == LEGACY_STRIDE:
        return _legacy_difference(recorded, prefix)
    stride, count = recorded.segment_stride, recorded.segment_count
    checkpoints = len(recorded.segment_digests) // DIGEST_BYTES
    rebuilt = len(prefix.digests)
    if _seed_differs(recorded, prefix):
        return "the prefix seed (format, system prompt tokens and digest) differs from the recorded one"
    for j in range(checkpoints):
        start, end = j * stride, checkpoint_position(j, stride=stride, count=count)
        digest = recorded.segment_digests[j * DIGEST_BYTES : (j + 1) * DIGEST_BYTES]
        seqs = recorded.segment_seqs[j * DIGEST_BYTES : (j + 1) * DIGEST_BYTES]
        if (
            end < rebuilt
            and digest == prefix.digests[end]
            and seqs == chunk_seq_digest(prefix.seqs[start : end + 1])
        ):
            continue
        where = f", from {prefix.paths[start]}" if start < rebuilt else ""
        if end >= rebuilt:
            what = "the rebuilt prefix ends before it"
        elif seqs != chunk_seq_digest(prefix.seqs[start : end + 1]):
            what = "it holds other blocks"
        else:
            what = "same blocks, rendered differently (text or hide state)"
        return (
            f"the prefix fingerprint differs from chunk {j + 1} of {checkpoints} (segments {start + 1}–{end + 1}"
            f"{where}): {what} ({rebuilt} segments rebuilt, {count} recorded)"
        )
    if rebuilt != count:
        return f"the rebuilt prefix has {rebuilt} segments, the recorded one {count}: the first {count} agree"
    return None


def _check(recorded: Recorded, rendered: Rendered) -> list[str]:
    problems = []
    diff = first_difference(recorded, rendered.prefix)
    if diff is not None:
        problems.append(diff)
    if sorted(rendered.cache_points) != sorted(recorded.cache_points):
        problems.append(
            f"the cache points differ: recorded {recorded.cache_points}, rebuilt {rendered.cache_points}"
        )
    return problems


def _cut_to_count(
    window: list[Block], *, count: int, settings: RenderSettings, options: RenderOptions, system_tokens: int
) -> list[Block]:
    """The shortest leading part of ``window`` whose prefix has ``count`` segments (a record that
    kept neither its blocks nor its bounds: today's window, cut where the recorded one ended)."""
    low, high = 0, len(window)
    while low < high:
        middle = (low + high) // 2
        rendered = render_window(
            window[:middle], settings=settings, options=options, system_tokens=system_tokens
        )
        if len(rendered.prefix.digests) < count:
            low = middle + 1
        else:
            high = middle
    return window[:low]


def _recorded_window(
    stored: Sequence[Block], recorded: Recorded, *, today_window: Sequence[Block], assumed: list[str]
) -> tuple[list[Block], list[str]]:
    """The blocks the recorded render's window held, or the problems that stop its replay; what
    had to be taken from today's state is added to ``assumed``."""
    if recorded.window is not None:
        window, problems = window_of(stored, recorded.window)
        if problems:
            return [], problems
    elif recorded.segment_stride == LEGACY_STRIDE:
        by_seq = {block.seq: block for block in stored}
        wanted = legacy_window_seqs(recorded)
        missing = [seq for seq in wanted if seq not in by_seq]
        if missing:
            return [], [f"stored blocks missing: seq {', '.join(map(str, missing[:20]))}"]
        window = [by_seq[seq] for seq in wanted]
    else:
        assumed.append("which blocks the window held (today's window, cut at the recorded segment count)")
        window = list(today_window)
    if recorded.window is None and recorded.hidden_count:
        assumed.append("which blocks were hidden (today's hide state assumed)")
    elif recorded.window is None:
        window = [replace(block, hidden=False) for block in window]
    return window, []


def replay(
    stored: Sequence[Block],
    recorded: Recorded,
    *,
    today_settings: RenderSettings,
    today_window: Sequence[Block] = (),
) -> Replay:
    """Render the recorded render again.

    ``stored``: the timeline's stored blocks with seq from ``recorded.window.first_seq`` to its
    ``last_seq`` and its summary (a record with a window shape), or those of
    ``legacy_window_seqs`` (a stride-0 record), with their hide state of today. ``today_window``:
    today's window of the context, for a record that kept neither (written between migrations
    0009 and 0013), cut at the recorded segment count. A record without inputs is replayed with
    ``today_settings``, each format in turn, no filters, no system prompt digest and — when it had
    hidden blocks and kept no hidden set — today's hide state; the fingerprint decides whether that
    was exact, and ``assumed`` says what was taken from today."""
    inputs = recorded.inputs if isinstance(recorded.inputs, dict) else {}
    assumed: list[str] = []
    window, problems = _recorded_window(stored, recorded, today_window=today_window, assumed=assumed)
    if problems:
        return Replay(None, False, problems=problems)

    if inputs.get("version") == INPUTS_VERSION:
        settings = read_settings(inputs.get("settings"))
        if settings is None or inputs.get("format") not in FORMATS:
            return Replay(None, False, problems=["the recorded settings are not readable any more"])
        candidates = [(read_options(inputs), str(inputs.get("system_digest") or ""))]
    else:
        assumed.insert(0, "settings, format and contribution filters (today's settings, each format tried)")
        if recorded.system_tokens:
            assumed.append("the system prompt's digest (none assumed)")
        settings = today_settings
        candidates = [(RenderOptions(format=name), "") for name in _FORMATS]
    best: Replay | None = None
    for options, digest in candidates:
        blocks = window
        if recorded.window is None and recorded.segment_stride != LEGACY_STRIDE:
            blocks = _cut_to_count(
                window,
                count=recorded.segment_count,
                settings=settings,
                options=options,
                system_tokens=recorded.system_tokens,
            )
        rendered = render_window(
            blocks,
            settings=settings,
            options=options,
            system_tokens=recorded.system_tokens,
            prefix_seed=digest,
        )
        problems = _check(recorded, rendered)
        if problems and recorded.window is not None and (lost := shown_since(stored, recorded.window)):
            problems.append(
                "hidden then and shown since, so their replacement text is not kept: " + ", ".join(lost[:20])
            )
        result = Replay(rendered, not problems, options, problems, assumed, len(rendered.prefix.digests))
        if result.exact:
            return result
        # Not exact: report the candidate with the recorded seed (the format it had), if any.
        if best is None or (best.rendered is not None and _seed_differs(recorded, best.rendered.prefix)):
            best = result
    assert best is not None
    return best


def _seed_differs(recorded: Recorded, prefix: Prefix) -> bool:
    return bool(recorded.segment_seed) and recorded.segment_seed != prefix.seed
