"""Why did this call cost so much? The prompt-cache explainer (pure).

Every render fingerprints its cacheable prefix: one cumulative hash per segment of the stable
stream (one segment per rendered block; the uncached tail is left out), seeded with what comes
before the timeline (format and system prompt). Two renders share a provider-cached prefix exactly
as far as their cumulative hashes agree, so comparing a render with the previous one says how many
prefix tokens the provider could reuse, where the prefix first changed, and why:

``first_render`` no previous render; ``ttl_expired`` the previous one is older than the cache TTL
(nothing is reused); ``settings_changed`` the render settings or format differ; ``compacted`` a
compaction was applied since; ``compaction_reverted`` the previous render's compaction was reverted
since; ``hidden`` a block of the previous prefix changed its hide state;
``appended_only`` the previous prefix is intact; ``other`` anything else (a clear(), a new system
prompt: the seed is recorded, so a change there is never read as a hide).
When several apply, the first in this order wins.

What a render record keeps of its prefix is bounded (``Fingerprint``): at most
``MAX_CHECKPOINTS`` checkpoints, one every ``stride`` segments (``stride`` = ⌈segments /
MAX_CHECKPOINTS⌉, 1 up to 1,024 segments), each an 8-byte cumulative digest and an 8-byte digest of
its chunk's seqs: 16 KiB at most, whatever the window (a 50,000-block window kept 326 kB before).
The record also keeps its window's shape for the admin's past-render view (``replay.py``): about
1–2 bytes per hidden or left-out block of the window, nothing for a window without.
Up to 1,024 segments the answers are exact, as a segment-by-segment comparison. Beyond, the
explainer finds the first chunk that changed: ``first_changed_index`` names that chunk's first
segment and ``reused_prefix_tokens`` counts the tokens before it (a lower bound, short by fewer
than ``stride`` segments); ``appended_only`` and the whole-prefix answers stay exact, and
``hidden`` needs the changed chunk to hold the same blocks (a hide and an insertion or removal in
one chunk read ``other``).
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import accumulate, pairwise
from typing import Literal

from timeline_app.domain.blocks import Block

CacheReason = Literal[
    "first_render",
    "ttl_expired",
    "settings_changed",
    "compacted",
    "compaction_reverted",
    "hidden",
    "appended_only",
    "other",
]
CACHE_REASONS: tuple[CacheReason, ...] = (
    "first_render",
    "ttl_expired",
    "settings_changed",
    "compacted",
    "compaction_reverted",
    "hidden",
    "appended_only",
    "other",
)
DIGEST_BYTES = 8
MAX_CHECKPOINTS = 1024
"""Most checkpoints a render record keeps (2 × 8 bytes each): see the module docstring."""
LEGACY_STRIDE = 0
"""The stride stored with records written before bounded fingerprints (migration 0007's encoding:
a digest per segment and the seqs as compressed deltas); they read as stride 1."""


@dataclass(frozen=True)
class Fingerprint:
    """What a render record stores of its prefix: ``count`` segments, a checkpoint every ``stride``
    segments (and on the last), their cumulative ``digests`` and their chunks' ``seq_digests``."""

    count: int
    stride: int
    digests: bytes
    seq_digests: bytes
    seed: bytes = b""


def stride_for(count: int) -> int:
    return max(1, -(-count // MAX_CHECKPOINTS))


def checkpoint_position(j: int, *, stride: int, count: int) -> int:
    """The segment index of checkpoint ``j``: the last segment of its chunk."""
    return min((j + 1) * stride, count) - 1


def stored_checkpoints(digests: bytes, *, stride: int, count: int) -> list[tuple[int, bytes]]:
    """A record's stored cumulative digests with the segment index each ends: ``(index, digest)``
    (a ``LEGACY_STRIDE`` record has one per segment; ``count`` is unknown for it)."""
    n = len(digests) // DIGEST_BYTES
    if stride == LEGACY_STRIDE:
        return [(i, digests[i * DIGEST_BYTES : (i + 1) * DIGEST_BYTES]) for i in range(n)]
    return [
        (
            checkpoint_position(j, stride=stride, count=count),
            digests[j * DIGEST_BYTES : (j + 1) * DIGEST_BYTES],
        )
        for j in range(n)
    ]


def chunk_seq_digest(seqs: Sequence[int]) -> bytes:
    """Which stored blocks a chunk holds, in order (8 bytes)."""
    return hashlib.sha256(struct.pack(f"<{len(seqs)}q", *seqs)).digest()[:DIGEST_BYTES]


@lru_cache(maxsize=1 << 16)
def single_seq_digest(seq: int) -> bytes:
    """``chunk_seq_digest`` of a chunk of one block: a context's renders digest the same seqs
    render after render (a segment a chunk, up to 1,024 segments), so remembered (issue 38: the
    record's fingerprint was a fifth of what recording a render added since 17fa090)."""
    return chunk_seq_digest((seq,))


@dataclass(frozen=True)
class Prefix:
    """The cacheable prefix of one render: per segment, the cumulative digest, the cumulative
    tokens, the block's path (or ``type#seq``) and the index of its first item in ``blocks``."""

    digests: tuple[bytes, ...] = ()
    tokens: tuple[int, ...] = ()
    paths: tuple[str, ...] = ()
    indices: tuple[int, ...] = ()
    seqs: tuple[int, ...] = ()
    # The digest of what comes before the timeline (format, system prompt): the chain's start, and
    # the usage forecast's first block (``rendering/usage/requests.py``).
    seed: bytes = b""

    @property
    def total_tokens(self) -> int:
        return self.tokens[-1] if self.tokens else 0

    def packed_digests(self) -> bytes:
        return b"".join(self.digests)

    def packed_seqs(self) -> bytes:
        """The seqs as zlib-compressed deltas (migration 0007's encoding, kept for its records)."""
        return pack_seqs(self.seqs)

    def fingerprint(self) -> Fingerprint:
        """The bounded record of this prefix (module docstring): one checkpoint per chunk."""
        count = len(self.digests)
        stride = stride_for(count)
        if stride == 1:  # every segment its own chunk (up to 1,024): the same bytes, faster
            return Fingerprint(
                count=count,
                stride=1,
                digests=b"".join(self.digests),
                seq_digests=b"".join(map(single_seq_digest, self.seqs)),
                seed=self.seed,
            )
        checkpoints = range(-(-count // stride))
        ends = [checkpoint_position(j, stride=stride, count=count) for j in checkpoints]
        return Fingerprint(
            count=count,
            stride=stride,
            digests=b"".join(self.digests[end] for end in ends),
            seq_digests=b"".join(chunk_seq_digest(self.seqs[j * stride : ends[j] + 1]) for j in checkpoints),
            seed=self.seed,
        )


def pack_seqs(seqs: Sequence[int]) -> bytes:
    if not seqs:
        return b""
    deltas = [seqs[0], *(after - before for before, after in pairwise(seqs))]
    return zlib.compress(struct.pack(f"<{len(deltas)}q", *deltas), 1)


def unpack_seqs(packed: bytes) -> tuple[int, ...]:
    if not packed:
        return ()
    raw = zlib.decompress(packed)
    return tuple(accumulate(struct.unpack(f"<{len(raw) // 8}q", raw)))


def segment_key(block: Block, text: str) -> bytes:
    """What identifies a block's rendering: the stored block (its seq: a stored block never changes
    but for its hide state) and its rendered text, which carries the hide state. The payload is not
    hashed again on every render: it belongs to the seq."""
    return block.seq.to_bytes(8, "little", signed=True) + text.encode("utf-8", "surrogatepass")


def build_prefix(seed: str, segments: Sequence[tuple[Block, bytes, int]]) -> Prefix:
    """``segments``: (block, its ``segment_key``, index of its first item in the response)."""
    sha256 = hashlib.sha256
    digest = start = sha256(seed.encode()).digest()[:DIGEST_BYTES]
    digests: list[bytes] = []
    for _, key, _ in segments:
        digest = sha256(digest + key).digest()[:DIGEST_BYTES]
        digests.append(digest)
    blocks = [block for block, _, _ in segments]
    return Prefix(
        digests=tuple(digests),
        tokens=tuple(accumulate(block.effective_tokens for block in blocks)),
        paths=tuple(block.path or f"{block.type}#{block.seq}" for block in blocks),
        indices=tuple(index for _, _, index in segments),
        seqs=tuple(block.seq for block in blocks),
        seed=start,
    )


@dataclass(frozen=True)
class PreviousRender:
    """What is kept of the previous render to compare with (see ``RenderRecord``): a
    ``Fingerprint``'s checkpoint digests and chunk seq digests, or, for records written before
    (``stride`` ``LEGACY_STRIDE``), a digest per segment and the packed seqs (``pack_seqs``). Its
    tokens are not kept: where two prefixes agree, their cumulative tokens agree too (same blocks,
    same renderings)."""

    at: datetime
    settings_key: str
    latest_compaction_id: int | None
    digests: bytes
    seqs: bytes
    stride: int = LEGACY_STRIDE
    segments: int | None = None
    seed: bytes = b""  # unknown for records written before migration 0009
    # The seqs hidden in its window and its last seq (records since migration 0013; None before).
    hidden: frozenset[int] | None = None
    last_seq: int | None = None

    def digest(self, i: int) -> bytes:
        """Checkpoint ``i``'s cumulative digest (a legacy record has one per segment)."""
        return self.digests[i * DIGEST_BYTES : (i + 1) * DIGEST_BYTES]

    def seq_at(self, i: int) -> int | None:
        seqs = unpack_seqs(self.seqs)
        return seqs[i] if i < len(seqs) else None

    @property
    def checkpoints(self) -> int:
        return len(self.digests) // DIGEST_BYTES

    @property
    def count(self) -> int:
        """How many segments the previous prefix had."""
        return self.segments if self.segments is not None and self.stride else self.checkpoints

    def position(self, j: int) -> int:
        return checkpoint_position(j, stride=self.stride or 1, count=self.count)

    def same_blocks(self, j: int, current: Prefix) -> bool:
        """Whether chunk ``j`` holds the same stored blocks, in order, in both renders."""
        start, end = j * (self.stride or 1), self.position(j)
        if end >= len(current.seqs):
            return False
        if self.stride == LEGACY_STRIDE:
            return self.seq_at(j) == current.seqs[j]
        stored = self.seqs[j * DIGEST_BYTES : (j + 1) * DIGEST_BYTES]
        return stored == chunk_seq_digest(current.seqs[start : end + 1])


@dataclass(frozen=True)
class CacheReport:
    previous_render_at: datetime | None
    reused_prefix_tokens: int
    first_changed_index: int | None
    first_changed_path: str | None
    reason: CacheReason


def explain_cache(
    *,
    previous: PreviousRender | None,
    current: Prefix,
    now: datetime,
    ttl_seconds: int,
    settings_key: str,
    latest_compaction_id: int | None,
    current_hidden: frozenset[int] = frozenset(),
    current_seqs: frozenset[int] | None = None,
) -> CacheReport:
    """Compare this render's prefix with the previous render's (see the module docstring).

    ``current_hidden`` and ``current_seqs`` (the seqs hidden in this render's window, and all its
    seqs) let a change of hide state be named ``hidden`` even when something earlier in the prefix
    changed too (a new system prompt): the previous record keeps its hidden seqs."""
    if previous is None:
        first = 0 if current.digests else None
        return CacheReport(None, 0, _index(current, first), _path(current, first), "first_render")
    agreeing = _agreeing_checkpoints(previous, current)
    intact = agreeing == previous.checkpoints
    common = previous.count if intact else (previous.position(agreeing - 1) + 1 if agreeing else 0)
    changed = common if common < len(current.digests) else None
    expired = ttl_seconds <= 0 or now - previous.at > timedelta(seconds=ttl_seconds)
    reused = 0 if expired or common == 0 else current.tokens[common - 1]
    reason: CacheReason
    if expired:
        reason = "ttl_expired"
    elif settings_key != previous.settings_key:
        reason = "settings_changed"
    elif latest_compaction_id != previous.latest_compaction_id:
        reverted = compaction_reverted(previous.latest_compaction_id, latest_compaction_id, current_seqs)
        reason = "compaction_reverted" if reverted else "compacted"
    elif _hide_state_changed(previous, current_hidden, current_seqs) or (
        not intact
        and changed is not None
        and previous.seed in (b"", current.seed)  # a new system prompt or format is no hide
        and previous.same_blocks(agreeing, current)
    ):
        reason = "hidden"
    elif intact:
        reason = "appended_only"
    else:
        reason = "other"
    return CacheReport(previous.at, reused, _index(current, changed), _path(current, changed), reason)


def compaction_reverted(
    previous_summary_seq: int | None, summary_seq: int | None, current_seqs: frozenset[int] | None
) -> bool:
    """Whether the window's summary changed because its compaction was reverted, not because one
    was applied (or the view cleared). A summary block takes the context's next seq when it is
    written, so a newer compaction's summary always has a higher seq than the previous one's: a
    lower one means the previous render's was reverted. No summary at all is a revert only when the
    window reaches back before the previous summary's seq (after a clear() it starts after it)."""
    if previous_summary_seq is None:
        return False
    if summary_seq is not None:
        return summary_seq < previous_summary_seq
    return bool(current_seqs) and min(current_seqs or ()) < previous_summary_seq


def _hide_state_changed(
    previous: PreviousRender, current_hidden: frozenset[int], current_seqs: frozenset[int] | None
) -> bool:
    """Whether a block both renders showed was hidden or unhidden in between (known only when the
    previous record kept its hidden seqs)."""
    if previous.hidden is None or previous.last_seq is None or current_seqs is None:
        return False
    last = previous.last_seq
    return any(seq in current_seqs and seq <= last for seq in previous.hidden ^ current_hidden)


def _agreeing_checkpoints(previous: PreviousRender, current: Prefix) -> int:
    """How many leading checkpoints of the previous prefix the current one agrees with. The
    digests are cumulative: once they differ they differ to the end, so a binary search finds the
    first difference."""
    low, high = 0, previous.checkpoints
    length = len(current.digests)
    while low < high:
        middle = (low + high) // 2
        at = previous.position(middle)
        if at < length and previous.digest(middle) == current.digests[at]:
            low = middle + 1
        else:
            high = middle
    return low


def _index(prefix: Prefix, i: int | None) -> int | None:
    return prefix.indices[i] if i is not None and i < len(prefix.indices) else None


def _path(prefix: Prefix, i: int | None) -> str | None:
    return prefix.paths[i] if i is not None and i < len(prefix.paths) else None
