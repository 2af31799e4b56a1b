"""Why did this call cost so much? The prompt-cache explainer (pure).

Every render fingerprints its cacheable prefix: one cumulative hash per segment of the stable
stream (one segment per rendered block; the uncached tail is left out), seeded with what comes
before the timeline (format and system prompt). Two renders share a provider-cached prefix exactly
as far as their cumulative hashes agree, so comparing a render with the previous one says how many
prefix tokens the provider could reuse, where the prefix first changed, and why:

``first_render`` no previous render; ``ttl_expired`` the previous one is older than the cache TTL
(nothing is reused); ``settings_changed`` the render settings or format differ; ``compacted`` a
compaction was applied since; ``hidden`` a block of the previous prefix changed its hide state;
``appended_only`` the previous prefix is intact; ``other`` anything else (filters, a clear()).
When several apply, the first in this order wins.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import accumulate, pairwise
from typing import Literal

from .blocks import Block

CacheReason = Literal[
    "first_render", "ttl_expired", "settings_changed", "compacted", "hidden", "appended_only", "other"
]
CACHE_REASONS: tuple[CacheReason, ...] = (
    "first_render",
    "ttl_expired",
    "settings_changed",
    "compacted",
    "hidden",
    "appended_only",
    "other",
)
DIGEST_BYTES = 8


@dataclass(frozen=True)
class Prefix:
    """The cacheable prefix of one render: per segment, the cumulative digest, the cumulative
    tokens, the block's path (or ``type#seq``) and the index of its first item in ``blocks``."""

    digests: tuple[bytes, ...] = ()
    tokens: tuple[int, ...] = ()
    paths: tuple[str, ...] = ()
    indices: tuple[int, ...] = ()
    seqs: tuple[int, ...] = ()
    # The digest of what precedes the timeline (format, system prompt): the usage forecast's
    # first block (``rendering/usage/requests.py``).
    seed: bytes = b""

    @property
    def total_tokens(self) -> int:
        return self.tokens[-1] if self.tokens else 0

    def packed_digests(self) -> bytes:
        return b"".join(self.digests)

    def packed_seqs(self) -> bytes:
        """The seqs as zlib-compressed deltas (a window's seqs mostly step by one: a few hundred
        bytes for 20,000 segments instead of 160 KB)."""
        return pack_seqs(self.seqs)


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
    digest = head = sha256(seed.encode()).digest()[:DIGEST_BYTES]
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
        seed=head,
    )


@dataclass(frozen=True)
class PreviousRender:
    """What is kept of the previous render to compare with (see ``RenderRecord``): the packed
    digests and the packed seqs (``pack_seqs``). Its tokens are not kept: where two prefixes
    agree, their cumulative tokens agree too (same blocks, same renderings)."""

    at: datetime
    settings_key: str
    latest_compaction_id: int | None
    digests: bytes
    seqs: bytes

    def digest(self, i: int) -> bytes:
        return self.digests[i * DIGEST_BYTES : (i + 1) * DIGEST_BYTES]

    def seq_at(self, i: int) -> int | None:
        seqs = unpack_seqs(self.seqs)
        return seqs[i] if i < len(seqs) else None

    @property
    def count(self) -> int:
        return len(self.digests) // DIGEST_BYTES


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
) -> CacheReport:
    """Compare this render's prefix with the previous render's (see the module docstring)."""
    if previous is None:
        first = 0 if current.digests else None
        return CacheReport(None, 0, _index(current, first), _path(current, first), "first_render")
    common = _common_segments(previous, current)
    changed = common if common < len(current.digests) else None
    intact = common == previous.count
    expired = ttl_seconds <= 0 or now - previous.at > timedelta(seconds=ttl_seconds)
    reused = 0 if expired or common == 0 else current.tokens[common - 1]
    reason: CacheReason
    if expired:
        reason = "ttl_expired"
    elif settings_key != previous.settings_key:
        reason = "settings_changed"
    elif latest_compaction_id != previous.latest_compaction_id:
        reason = "compacted"
    elif not intact and changed is not None and _same_block(previous, current, changed):
        reason = "hidden"
    elif intact:
        reason = "appended_only"
    else:
        reason = "other"
    return CacheReport(previous.at, reused, _index(current, changed), _path(current, changed), reason)


def _common_segments(previous: PreviousRender, current: Prefix) -> int:
    """How many leading segments the two prefixes share. The digests are cumulative: once they
    differ they differ to the end, so a binary search finds the first difference."""
    low, high = 0, min(previous.count, len(current.digests))
    while low < high:
        middle = (low + high) // 2
        if previous.digest(middle) == current.digests[middle]:
            low = middle + 1
        else:
            high = middle
    return low


def _same_block(previous: PreviousRender, current: Prefix, i: int) -> bool:
    """The segment at ``i`` is the same stored block in both renders with another rendering:
    stored blocks never change but for their hide state."""
    return previous.seq_at(i) == current.seqs[i]


def _index(prefix: Prefix, i: int | None) -> int | None:
    return prefix.indices[i] if i is not None and i < len(prefix.indices) else None


def _path(prefix: Prefix, i: int | None) -> str | None:
    return prefix.paths[i] if i is not None and i < len(prefix.paths) else None
