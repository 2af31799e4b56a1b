"""The ``conv.range.summary`` block a compaction stores (pure): seed 002 "What Compaction Produces"."""

from __future__ import annotations

from typing import Any

from compaction.planner import CompactionPlan
from compaction.summary.sections import SPLIT_TURN_HEADING, split_turn_body
from timeline_app.domain.blocks import SUMMARY, summary_path

SUMMARY_MIME = "text/markdown"


def build_summary_block(
    plan: CompactionPlan,
    *,
    summary_text: str,
    split_text: str | None,
    digest: dict[str, Any],
    turn_id: str,
) -> dict[str, Any]:
    """The fields of the ``conv.range.summary`` block to store for ``plan``.

    ``turn_id`` names the summary (its path is ``su:<turn_id>.conv.range.summary``); the shell
    usually passes the current turn. The split-turn prefix summary follows under
    "Turn Context (split turn)", its own title or turn-context heading left out and its sections
    one level down, so the heading appears once whichever summarizer wrote it.
    """
    text = summary_text.rstrip()
    if plan.is_split:
        text = f"{text}\n\n{SPLIT_TURN_HEADING}\n{split_turn_body(split_text or '')}"
    compacted = plan.compacted
    meta: dict[str, Any] = {
        "compaction_digest": digest,
        "covered_turn_ids": list(plan.covered_turn_ids),
        "first_retained_seq": plan.first_retained_seq,
        "summarized_seqs": [compacted[0].seq, compacted[-1].seq] if compacted else [],
    }
    if plan.split_turn_id is not None:
        meta["split_turn_id"] = plan.split_turn_id
        # The split turn's start time, for the "(continued)" header the render shows before the
        # first retained block (the stored header is compacted).
        meta["split_turn_ts"] = plan.split_prefix[0].ts if plan.split_prefix else ""
    return {
        "type": SUMMARY,
        "author": "system",
        "turn_id": turn_id,
        "path": summary_path(turn_id),
        "mime": SUMMARY_MIME,
        "text": text,
        "meta": meta,
    }
