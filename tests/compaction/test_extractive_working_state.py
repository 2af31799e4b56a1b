"""The working state an agent needs after a compaction (issue 24), kept by the extractive summary:
standing instructions verbatim, the active plan's pending steps, each file with its last action,
decisions with their reason, and the latest request even after a run of short follow-ups."""

from __future__ import annotations

import json

from compaction.summarizers import ExtractiveSummarizer
from compaction.summary_sections import parse_sections
from timeline_app.domain.blocks import Block


def _blocks() -> list[Block]:
    plan = {"steps": [{"text": "Verify the payment", "status": "done"}, {"text": "Email the customer"}]}
    later = {"steps": [{"text": "Email the customer", "status": "done"}, {"text": "Close ticket SUP-1234"}]}
    rows: list[dict[str, object]] = [
        {
            "type": "user.prompt",
            "author": "user",
            "text": "Refund order ORD-555123. Always answer in German.",
        },
        {"type": "react.plan", "path": "ar:t1.react.plan", "text": json.dumps(plan)},
        {
            "type": "react.tool.call",
            "path": "tc:t1.tc_1.call",
            "meta": {"tool_id": "fs.read", "tool_call_id": "tc_1"},
            "text": json.dumps({"tool_id": "fs.read", "params": {"path": "cases/case_1.pdf"}}),
        },
        {
            "type": "react.tool.call",
            "path": "tc:t1.tc_2.call",
            "meta": {"tool_id": "crm.export_case", "tool_call_id": "tc_2"},
            "text": json.dumps({"params": {"target": "cases/case_1.pdf", "format": "pdf"}}),
        },
        {
            "type": "assistant.completion",
            "author": "assistant",
            "text": "Done; the results are above. I issued a store credit because the parcel was late.",
        },
        {"type": "user.prompt", "author": "user", "text": "ok"},
        {"type": "user.prompt", "author": "user", "text": "Go on."},
        {"type": "user.prompt", "author": "user", "text": "Thanks."},
        {"type": "react.plan", "path": "ar:t4.react.plan", "text": json.dumps(later)},
    ]
    return [Block(seq=i + 1, turn_id=f"t{i // 3 + 1}", **row) for i, row in enumerate(rows)]  # type: ignore[arg-type]


def test_the_working_state_sections_exact() -> None:
    text = ExtractiveSummarizer().summarize(blocks=_blocks(), previous_summary=None, max_tokens=800)
    lines = parse_sections(text)
    assert lines["constraints"] == ["- Always answer in German."]
    assert lines["next_steps"] == ["- plan `ar:t4.react.plan`, pending:", "- [ ] Close ticket SUP-1234"]
    assert lines["artifacts"] == ["- `cases/case_1.pdf` — crm.export_case (tc:t1.tc_2.call)"]
    assert lines["decisions"] == ["- [t2] I issued a store credit because the parcel was late."]
    assert lines["progress"] == []


def test_follow_ups_do_not_push_the_latest_request_out_under_pressure() -> None:
    blocks = _blocks()
    requests = [
        Block(
            seq=100 + k,
            type="user.prompt",
            author="user",
            turn_id=f"r{k}",
            text=f"Please check invoice INV-{k:04d} twice.",
        )
        for k in range(6)
    ]
    text = ExtractiveSummarizer().summarize(
        blocks=[*requests, *blocks[1:]], previous_summary=None, max_tokens=120
    )
    assert "- [r5] Please check invoice INV-0005 twice." in text
    assert "- Always answer in German." not in text  # said in no prompt of this range
    assert "- [t2] ok" not in text  # a follow-up is dropped before the latest requests


def test_constraints_survive_the_next_summary_verbatim() -> None:
    first = ExtractiveSummarizer().summarize(blocks=_blocks(), previous_summary=None, max_tokens=800)
    filler = [
        Block(
            seq=200 + k, type="react.tool.result", turn_id="t9", path=f"tc:t9.tc_{k}.result", text="x " * 300
        )
        for k in range(20)
    ]
    second = ExtractiveSummarizer().summarize(blocks=filler, previous_summary=first, max_tokens=150)
    assert "- Always answer in German." in second
    assert "- [ ] Close ticket SUP-1234" in second
