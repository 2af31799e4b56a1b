"""The operations log's rules (issue 35): which operations change what the model sees, and the one
shape of an entry. Pure data; ``services.operations.operation_record`` stores entries.

An entry says what happened to one context, when and by whom, with the numbers: the context's
visible tokens before and after (compactions, reverts, TTL prunes), or the tokens of the blocks it
changed (hides, unhides, pops); the seqs it affected as ranges and the paths (at most
``MAX_PATHS``, the rest counted in ``details.paths_omitted``); the compaction's id, model and cost
where there is one; and in ``details`` the reason with its numbers (a rejected or skipped
compaction's threshold, a settings change's keys).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

COMPACTION_APPLIED = "compaction_applied"
COMPACTION_REJECTED = "compaction_rejected"
COMPACTION_SKIPPED = "compaction_skipped"
COMPACTION_FAILED = "compaction_failed"
COMPACTION_REVERTED = "compaction_reverted"
TTL_PRUNED = "ttl_pruned"
HIDDEN = "hidden"
UNHIDDEN = "unhidden"
IMPORTED = "imported"
SETTINGS_CHANGED = "settings_changed"
CONTEXT_CREATED = "context_created"
CONTEXT_CLEARED = "context_cleared"
CONTEXT_BRANCHED = "context_branched"
MESSAGES_ERASED = "messages_erased"

KINDS: tuple[str, ...] = (
    COMPACTION_APPLIED,
    COMPACTION_REJECTED,
    COMPACTION_SKIPPED,
    COMPACTION_FAILED,
    COMPACTION_REVERTED,
    TTL_PRUNED,
    HIDDEN,
    UNHIDDEN,
    IMPORTED,
    SETTINGS_CHANGED,
    CONTEXT_CREATED,
    CONTEXT_CLEARED,
    CONTEXT_BRANCHED,
    MESSAGES_ERASED,
)

# A compaction's final status -> the kind of its entry (queued and running are no operation).
COMPACTION_KINDS: Mapping[str, str] = {
    "applied": COMPACTION_APPLIED,
    "rejected": COMPACTION_REJECTED,
    "skipped": COMPACTION_SKIPPED,
    "failed": COMPACTION_FAILED,
    "reverted": COMPACTION_REVERTED,
}

SYSTEM = "system"
"""The actor of the worker, the beat and every write no API key or staff user asked for."""
MAX_ACTOR = 150
MAX_PATHS = 100
MAX_RANGES = 100
MAX_TEXT = 500


class UnknownKinds(ValueError):
    def __init__(self, unknown: list[str]):
        super().__init__(", ".join(unknown))
        self.unknown = unknown


def parse_kinds(values: Iterable[str]) -> tuple[str, ...]:
    """The kinds a filter names: each value one kind or a comma list; blanks ignored. An unknown
    kind raises ``UnknownKinds`` naming every one of them."""
    wanted = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = sorted({kind for kind in wanted if kind not in KINDS})
    if unknown:
        raise UnknownKinds(unknown)
    return tuple(dict.fromkeys(wanted))


def seq_ranges(seqs: Iterable[int] = (), ranges: Iterable[Sequence[int]] = ()) -> list[list[int]]:
    """Seqs and ``[first, last]`` ranges (empty ones, ``first > last``, left out) as sorted,
    merged ranges: at most ``MAX_RANGES`` (the last one then runs to the highest seq)."""
    spans = sorted([*((seq, seq) for seq in seqs), *((r[0], r[1]) for r in ranges if r[0] <= r[1])])
    merged: list[list[int]] = []
    for first, last in spans:
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    if len(merged) > MAX_RANGES:
        merged = [*merged[: MAX_RANGES - 1], [merged[MAX_RANGES - 1][0], merged[-1][1]]]
    return merged


@dataclass(frozen=True)
class OperationEntry:
    """One entry of a context's operations log, as stored and answered."""

    kind: str
    actor: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    seq_ranges: list[list[int]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    compaction_id: str = ""
    model: str = ""
    cost_usd: Decimal | None = None
    details: dict[str, Any] = field(default_factory=dict)


def operation_entry(
    kind: str,
    *,
    actor: str,
    tokens_before: int | None = None,
    tokens_after: int | None = None,
    seqs: Iterable[int] = (),
    ranges: Iterable[Sequence[int | None]] = (),
    paths: Iterable[str] = (),
    compaction_id: str | None = "",
    model: str = "",
    cost_usd: Decimal | None = None,
    details: Mapping[str, Any] | None = None,
) -> OperationEntry:
    """The entry for an operation of ``kind`` (one of ``KINDS``: ValueError otherwise): seqs
    (``seqs`` one by one and/or ``ranges``) merged into ranges, paths deduplicated in order and
    capped, the actor and any text detail cut to their bounds."""
    if kind not in KINDS:
        raise ValueError(f"unknown operation kind {kind!r}")
    merged = seq_ranges(seqs, [(r[0], r[1]) for r in ranges if r[0] is not None and r[1] is not None])
    unique_paths = [p for p in dict.fromkeys(paths) if p]
    extra = {
        key: (value[:MAX_TEXT] if isinstance(value, str) else value) for key, value in (details or {}).items()
    }
    if len(unique_paths) > MAX_PATHS:
        extra["paths_omitted"] = len(unique_paths) - MAX_PATHS
    return OperationEntry(
        kind=kind,
        actor=(actor or SYSTEM)[:MAX_ACTOR],
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        seq_ranges=merged,
        paths=unique_paths[:MAX_PATHS],
        compaction_id=compaction_id or "",
        model=model,
        cost_usd=cost_usd,
        details=extra,
    )


def compaction_details(*, error: str, threshold_tokens: int | None) -> dict[str, Any]:
    """Why a compaction ended as it did, with the number that decided it besides its tokens
    before and after: the threshold it was planned against."""
    details: dict[str, Any] = {}
    if error:
        details["reason"] = error
    if threshold_tokens is not None:
        details["threshold_tokens"] = threshold_tokens
    return details


def settings_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The overrides a settings change moved: ``{key: [before, after]}`` (None: not overridden)."""
    keys = sorted(set(before) | set(after))
    return {key: [before.get(key), after.get(key)] for key in keys if before.get(key) != after.get(key)}
