"""The shape of the window a render saw, kept on its record (pure): the summary it started with,
its first and last seq, the runs of seqs it left out between them, and the seqs hidden at that
moment, packed small (LEB128 varints, deflated when that is smaller). ``replay`` rebuilds the
window from the stored blocks with it.
"""

from __future__ import annotations

import zlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, pairwise

from timeline_app.domain.blocks import SUMMARY, Block

_RAW, _DEFLATED = b"\x00", b"\x01"


# ---------------------------------------------------------------- packed seq sets


def pack_seq_set(seqs: Sequence[int]) -> bytes:
    """A set of seqs (≥ 0) as ascending deltas, LEB128 varints, deflated when that is smaller; one
    leading byte says which. Empty set: ``b""``."""
    if not seqs:
        return b""
    out = bytearray()
    previous = 0
    for seq in sorted(set(seqs)):
        delta = seq - previous
        previous = seq
        while delta >= 0x80:
            out.append((delta & 0x7F) | 0x80)
            delta >>= 7
        out.append(delta)
    raw = bytes(out)
    deflated = zlib.compress(raw, 9)
    return _DEFLATED + deflated if len(deflated) < len(raw) else _RAW + raw


def unpack_seq_set(packed: bytes) -> tuple[int, ...]:
    return tuple(accumulate(_unpack_varints(packed)))


# ---------------------------------------------------------------- the window a render saw


@dataclass(frozen=True)
class WindowShape:
    """Which stored blocks a render's window held, and which of them were hidden (packed)."""

    summary_seq: int | None
    first_seq: int | None
    last_seq: int | None
    skipped_seqs: bytes
    hidden_seqs: bytes
    hidden_count: int


def pack_seq_runs(runs: Sequence[tuple[int, int]]) -> bytes:
    """Ascending, disjoint runs ``(first, last)`` of seqs, as ``pack_seq_set`` packs numbers: each
    run's distance from the previous run's end, then its length less one. A run of a million seqs
    (an import's gap) costs a few bytes, never a million entries."""
    if not runs:
        return b""
    out = bytearray()
    previous = 0
    for first, last in runs:
        for value in (first - previous, last - first):
            while value >= 0x80:
                out.append((value & 0x7F) | 0x80)
                value >>= 7
            out.append(value)
        previous = last
    raw = bytes(out)
    deflated = zlib.compress(raw, 9)
    return _DEFLATED + deflated if len(deflated) < len(raw) else _RAW + raw


def unpack_seq_runs(packed: bytes) -> tuple[tuple[int, int], ...]:
    numbers = _unpack_varints(packed)
    runs: list[tuple[int, int]] = []
    previous = 0
    for i in range(0, len(numbers) - 1, 2):
        first = previous + numbers[i]
        last = first + numbers[i + 1]
        runs.append((first, last))
        previous = last
    return tuple(runs)


def _unpack_varints(packed: bytes) -> list[int]:
    if not packed:
        return []
    raw = zlib.decompress(packed[1:]) if packed[:1] == _DEFLATED else packed[1:]
    numbers: list[int] = []
    value = shift = 0
    for byte in raw:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        numbers.append(value)
        value = shift = 0
    return numbers


def absent_runs(seqs: Sequence[int]) -> list[tuple[int, int]]:
    """The runs of seqs between ``min(seqs)`` and ``max(seqs)`` that ``seqs`` leaves out: stored
    blocks a render skipped and seqs never stored (an import keeps its gaps) alike. O(n log n)
    in the window, whatever the span of its seqs."""
    ordered = sorted(set(seqs))
    return [(a + 1, b - 1) for a, b in pairwise(ordered) if b - a > 1]


def window_shape(window: Sequence[Block]) -> WindowShape:
    """The shape of the window a render rendered: ``[summary] + blocks`` in seq order."""
    summary = window[0].seq if window and window[0].type == SUMMARY else None
    rest = [block.seq for block in (window[1:] if summary is not None else window)]
    hidden = [block.seq for block in window if block.hidden]
    if not rest:
        return WindowShape(summary, None, None, b"", pack_seq_set(hidden), len(hidden))
    first, last = min(rest), max(rest)
    skipped = absent_runs(rest)
    return WindowShape(summary, first, last, pack_seq_runs(skipped), pack_seq_set(hidden), len(hidden))


def _in_runs(seq: int, runs: Sequence[tuple[int, int]], starts: Sequence[int]) -> bool:
    i = bisect_right(starts, seq) - 1
    return i >= 0 and runs[i][0] <= seq <= runs[i][1]


def window_of(stored: Sequence[Block], shape: WindowShape) -> tuple[list[Block], list[str]]:
    """The window ``shape`` describes, from ``stored`` (the timeline's blocks of seq ``first_seq``
    to ``last_seq`` and the summary), with the recorded hide state; and what is missing."""
    by_seq = {block.seq: block for block in stored}
    hidden = frozenset(unpack_seq_set(shape.hidden_seqs))
    problems: list[str] = []
    window: list[Block] = []
    if shape.summary_seq is not None:
        if shape.summary_seq in by_seq:
            window.append(by_seq[shape.summary_seq])
        else:
            problems.append(f"the summary block (seq {shape.summary_seq}) is not stored any more")
    if shape.first_seq is not None and shape.last_seq is not None:
        runs = unpack_seq_runs(shape.skipped_seqs)
        starts = [first for first, _ in runs]
        window.extend(
            block
            for block in sorted(by_seq.values(), key=lambda b: b.seq)
            if shape.first_seq <= block.seq <= shape.last_seq
            and not _in_runs(block.seq, runs, starts)
            and block.seq != shape.summary_seq
        )
        # Every seq of the span is either in a skipped run or a block of the window: the holes
        # left are blocks the render had that are not stored any more.
        covered = sorted(
            [(first, last) for first, last in runs]
            + [(block.seq, block.seq) for block in window if block.seq != shape.summary_seq]
        )
        missing: list[int] = []
        expected = shape.first_seq
        for first, last in covered:
            missing.extend(range(expected, min(first, expected + 21)))
            expected = max(expected, last + 1)
        missing.extend(range(expected, min(shape.last_seq + 1, expected + 21)))
        if missing:
            shown = ", ".join(map(str, missing[:20])) + (" …" if len(missing) > 20 else "")
            problems.append(f"stored blocks missing: seq {shown}")
    return [replace(block, hidden=block.seq in hidden) for block in window], problems


def shown_since(stored: Sequence[Block], shape: WindowShape) -> list[str]:
    """The blocks hidden in the window then and shown since (``…/unhide/``): a shown block keeps
    no replacement text, so what the render showed in their place is not stored any more."""
    hidden = frozenset(unpack_seq_set(shape.hidden_seqs))
    return [
        block.path or f"{block.type}#{block.seq}"
        for block in stored
        if block.seq in hidden and not block.hidden and not block.replacement_text
    ]
