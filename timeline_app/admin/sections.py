"""The conversation page's rows, built from what ``admin.page_selectors`` read: a page of turns
grouped under the summaries that compacted them, each block as one row, and a digest as tables.
Built in memory only; no reads here."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compaction.digest import DIGEST_KEYS, read_digest
from timeline_app.admin import display
from timeline_app.domain import blocks as b
from timeline_app.domain.text import one_line
from timeline_app.models import Block, Compaction, Timeline

if TYPE_CHECKING:
    from timeline_app.admin.page_selectors import ListedBlock

DIGEST_ROWS = 100
PREVIEW_CHARS = 160
PROMPT_CHARS = 140


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass
class Capped:
    """The first rows of a list, and how many were left off."""

    rows: list[Any]
    more: int = 0

    @classmethod
    def of(cls, items: list[Any], limit: int = DIGEST_ROWS) -> Capped:
        return cls(items[:limit], max(0, len(items) - limit))

    def __len__(self) -> int:
        return len(self.rows) + self.more


def digest_tables(digest: Any) -> dict[str, Capped]:
    """``meta.compaction_digest`` as one table per key (``DIGEST_KEYS``), read through the one
    tolerant reader, ``compaction.digest.read_digest``; the lists inside a row joined for a cell."""
    read = read_digest(digest)
    tables: dict[str, list[Any]] = {key: getattr(read, key) for key in DIGEST_KEYS}
    tables["tool_outputs"] = [
        {"tool_id": tool_id, **entry}
        for tool_id in sorted(read.tool_outputs)
        for entry in read.tool_outputs[tool_id]
    ]
    tables["memsearch"] = [{**row, "paths": ", ".join(_strings(row.get("paths")))} for row in read.memsearch]
    tables["artifacts"] = [
        {**row, "sources_used": ", ".join(str(s) for s in row.get("sources_used") or [])}
        for row in read.artifacts
    ]
    return {key: Capped.of(rows) for key, rows in tables.items()}


@dataclass
class BlockRow:
    pk: int
    seq: int
    type: str
    author: str
    path: str
    mime: str
    tokens: int
    preview: str
    hidden: bool
    hidden_reason: str
    replacement_text: str
    replacement_tokens: int
    cleared: bool
    is_summary: bool
    binary_size: int
    url: str


@dataclass
class TurnPart:
    """A turn, or the part of a (split) turn that falls into one section."""

    turn_id: str
    prompt: str
    started: str
    blocks: list[BlockRow]
    block_total: int
    tokens: int
    hidden_count: int
    split: bool = False
    continued: bool = False
    more_blocks: int = 0
    more_url: str = ""


@dataclass
class SummaryPanel:
    compaction: Compaction
    number: int
    latest: bool
    summary: Block | None
    covered_turn_ids: list[str]
    split_turn_id: str
    digest: dict[str, Capped]
    summary_url: str = ""
    compacted_at: str = ""


@dataclass
class Section:
    """Consecutive turns of one page that share their state: under one summary, or visible."""

    panel: SummaryPanel | None
    turns: list[TurnPart] = field(default_factory=list)


def summary_panels(compactions: list[Compaction]) -> list[SummaryPanel]:
    """One panel per applied compaction, numbered in timeline order."""
    panels = []
    for number, compaction in enumerate(compactions, start=1):
        summary = compaction.summary_block
        meta = summary.meta if summary is not None and isinstance(summary.meta, dict) else {}
        panels.append(
            SummaryPanel(
                compaction=compaction,
                number=number,
                latest=number == len(compactions),
                summary=summary,
                covered_turn_ids=_strings(compaction.covered_turn_ids),
                split_turn_id=compaction.split_turn_id,
                digest=digest_tables(meta.get("compaction_digest")),
                summary_url=display.block_change_url(summary.pk) if summary is not None else "",
                compacted_at=display.utc(compaction.started_at),
            )
        )
    return panels


def _block_row(block: ListedBlock, *, view_start_seq: int) -> BlockRow:
    return BlockRow(
        pk=block.pk,
        seq=block.seq,
        type=block.type,
        author=block.author,
        path=block.path,
        mime=block.mime,
        tokens=block.tokens,
        preview=one_line(block.text_head or "", PREVIEW_CHARS),
        hidden=block.hidden,
        hidden_reason=block.hidden_reason,
        replacement_text=block.replacement_text,
        replacement_tokens=block.replacement_tokens,
        cleared=block.seq < view_start_seq,
        is_summary=block.type == b.SUMMARY,
        binary_size=block.data_size,
        url=display.block_change_url(block.pk),
    )


def _split_by_section(
    turn_blocks: list[ListedBlock], bounds: list[int]
) -> list[tuple[int, list[ListedBlock]]]:
    """A turn's blocks as runs that fall under the same summary (index into ``bounds``) or none.

    Applied compaction *k* covers the blocks below its first retained seq and at or above the
    previous one's; a summary block stays with the part of its turn it was written in.
    """
    parts: list[tuple[int, list[ListedBlock]]] = []
    for block in turn_blocks:
        if block.type == b.SUMMARY:
            key = parts[-1][0] if parts else len(bounds)
        else:
            key = bisect_right(bounds, block.seq)
        if parts and parts[-1][0] == key:
            parts[-1][1].append(block)
        else:
            parts.append((key, [block]))
    return parts or [(len(bounds), [])]


def _turn_parts(
    timeline: Timeline, turn: dict[str, Any], turn_blocks: list[ListedBlock], bounds: list[int]
) -> Iterator[tuple[int, TurnPart]]:
    """The parts of one turn, each with the index of the section it belongs to."""
    parts = _split_by_section(turn_blocks, bounds)
    turn_id = turn["turn_id"]
    prompt = next(
        (one_line(x.text_head or "", PROMPT_CHARS) for x in turn_blocks if x.type == b.USER_PROMPT),
        "",
    )
    ts = next((x.ts for x in turn_blocks if x.ts), "")
    for index, (key, part_blocks) in enumerate(parts):
        part = TurnPart(
            turn_id=turn_id,
            prompt=prompt,
            started=display.utc(ts) if ts else "",
            blocks=[_block_row(x, view_start_seq=timeline.view_start_seq) for x in part_blocks],
            block_total=turn["block_total"],
            tokens=sum(x.effective_tokens for x in part_blocks),
            hidden_count=sum(1 for x in part_blocks if x.hidden),
            split=len(parts) > 1,
            continued=index > 0,
        )
        if index == len(parts) - 1 and turn["block_total"] > len(turn_blocks):
            part.more_blocks = turn["block_total"] - len(turn_blocks)
            part.more_url = display.block_changelist_url(timeline=timeline, q=turn_id)
        yield key, part


def build_sections(
    *,
    timeline: Timeline,
    turns: list[dict[str, Any]],
    blocks: list[ListedBlock],
    panels: list[SummaryPanel],
) -> list[Section]:
    """Group a page of turns under the summaries that compacted them.

    Blocks from the latest first retained seq on are the visible window. A split turn therefore
    shows twice: its prefix under the summary, the rest in the visible part.
    """
    bounds = [p.compaction.first_retained_seq or 0 for p in panels]
    by_turn: dict[str, list[ListedBlock]] = {}
    for block in blocks:
        by_turn.setdefault(block.turn_id, []).append(block)
    sections: list[Section] = []
    for turn in turns:
        for key, part in _turn_parts(timeline, turn, by_turn.get(turn["turn_id"], []), bounds):
            panel = panels[key] if key < len(panels) else None
            if sections and sections[-1].panel is panel:
                sections[-1].turns.append(part)
            else:
                sections.append(Section(panel=panel, turns=[part]))
    return sections
