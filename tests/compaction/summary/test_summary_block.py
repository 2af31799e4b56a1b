"""Summary insertion: the stored fields of the ``conv.range.summary`` block (seed 002)."""

from __future__ import annotations

import json

from compaction.digest import build_digest
from compaction.planner import plan_at_cut
from compaction.summary.block import build_summary_block
from tests.builders import Stream
from timeline_app.domain.blocks import SUMMARY, TURN_HEADER, is_valid_path
from timeline_app.domain.settings import RenderSettings

SETTINGS = RenderSettings(
    max_tokens=2000, threshold=0.5, keep_recent_tokens=300, summary_max_tokens=100, split_prefix_max_tokens=50
)


def test_summary_block_fields_path_and_meta() -> None:
    s = Stream()
    for i in range(12):
        s.sized_turn(f"t{i}", calls=2)
    cut = max(i for i, b in enumerate(s.blocks) if b.type == TURN_HEADER)
    plan = plan_at_cut(s.blocks, cut, system_tokens=0, settings=SETTINGS)
    assert plan.split_turn_id is None
    digest = build_digest(plan.compacted)
    fields = build_summary_block(
        plan, summary_text="the summary\n", split_text=None, digest=digest, turn_id="t12"
    )
    assert fields["type"] == SUMMARY
    assert fields["author"] == "system"
    assert fields["turn_id"] == "t12"
    assert fields["path"] == "su:t12.conv.range.summary"
    assert is_valid_path(fields["path"])
    assert fields["mime"] == "text/markdown"
    assert fields["text"] == "the summary"
    meta = fields["meta"]
    assert meta["compaction_digest"] == digest
    assert meta["covered_turn_ids"] == list(plan.covered_turn_ids)
    assert "split_turn_id" not in meta
    assert meta["first_retained_seq"] == plan.first_retained_seq
    assert meta["summarized_seqs"] == [plan.summarized[0].seq, plan.summarized[-1].seq]
    json.dumps(fields)  # storable as JSON
