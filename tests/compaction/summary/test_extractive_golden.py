"""The extractive summary of one small history, line for line (pure): which block feeds which
section, the previous summary merged in, the split-turn form, and what a tight budget drops
first. A change to any of these rules changes one of these texts."""

from __future__ import annotations

import pytest

from compaction.summary import ExtractiveSummarizer
from timeline_app.domain.blocks import Block

BLOCKS = [
    Block(seq=1, type="turn.header", turn_id="t1", author="user", path="ar:t1.turn.header"),
    Block(
        seq=2,
        type="user.prompt",
        turn_id="t1",
        author="user",
        path="ar:t1.user.prompt",
        text="Book a flight to Lisbon for INV-2024-0042, see /srv/docs/trip.pdf",
    ),
    Block(
        seq=3,
        type="react.tool.call",
        turn_id="t1",
        author="assistant",
        path="tc:t1.tc_a.call",
        meta={"tool_call_id": "tc_a", "tool_id": "web.search"},
        text='{"q": "flights"}',
    ),
    Block(
        seq=4,
        type="react.tool.result",
        turn_id="t1",
        author="tool",
        path="tc:t1.tc_a.result",
        meta={"tool_call_id": "tc_a", "tool_id": "web.search", "status": "ok"},
        text="3 flights found",
    ),
    Block(
        seq=5,
        type="react.tool.result",
        turn_id="t1",
        author="tool",
        path="tc:t1.tc_b.result",
        meta={"tool_call_id": "tc_b", "status": "error"},
    ),
    Block(
        seq=6,
        type="react.notes",
        turn_id="t1",
        author="assistant",
        meta={"tool_call_id": "tc_c"},
        text="Decided: take the morning flight",
    ),
    Block(
        seq=7,
        type="assistant.completion",
        turn_id="t1",
        author="assistant",
        path="ar:t1.assistant.completion",
        text="Booked TAP 1234.",
    ),
    Block(seq=8, type="react.notes", turn_id="t2", author="user", text="also a hotel near E4021"),
]
PREVIOUS = "# Conversation summary\n\n## Goals / requests\n- [t0] the first goal\n\n## Key identifiers\n- txn_8f3a2c91"
PATHS = [
    "- `ar:t1.turn.header`",
    "- `ar:t1.user.prompt`",
    "- `tc:t1.tc_a.call` (tool web.search)",
    "- `tc:t1.tc_a.result` (tool web.search)",
    "- `tc:t1.tc_b.result`",
    "- tool_call_id `tc_c` (react.notes)",
    "- `ar:t1.assistant.completion`",
]
REQUESTS = [
    "- [t1] Book a flight to Lisbon for INV-2024-0042, see /srv/docs/trip.pdf",
    "- [t2] also a hotel near E4021",
]


def _summary(*, purpose: str = "history", max_tokens: int = 2000, previous: str | None = PREVIOUS) -> str:
    return ExtractiveSummarizer().summarize(
        blocks=BLOCKS, previous_summary=previous, max_tokens=max_tokens, purpose=purpose
    )


def _text(title: str, marks: str, sections: list[tuple[str, list[str]]]) -> str:
    parts = [title] if title else []
    for heading, lines in sections:
        parts.append("\n".join([f"{marks} {heading}", *lines]))
    return "\n\n".join(parts)


def test_history_summary_with_the_previous_one_merged() -> None:
    assert _summary() == _text(
        "# Conversation summary",
        "##",
        [
            ("Goals / requests", ["- [t0] the first goal", *REQUESTS]),
            ("Progress", ["- [t1] Booked TAP 1234."]),
            ("Errors", ["- `tc:t1.tc_b.result`: error"]),
            ("Key identifiers", ["- txn_8f3a2c91"]),
            ("Paths and tool calls", PATHS),
        ],
    )


def test_split_turn_summary_has_no_title_and_third_level_headings() -> None:
    assert _summary(purpose="split_turn", previous=None) == _text(
        "",
        "###",
        [
            ("Goals / requests", REQUESTS),
            ("Progress", ["- [t1] Booked TAP 1234."]),
            ("Errors", ["- `tc:t1.tc_b.result`: error"]),
            ("Paths and tool calls", PATHS),
        ],
    )


@pytest.mark.parametrize(
    ("max_tokens", "sections"),
    [
        (
            120,
            [
                ("Goals / requests", ["- [t0] the first goal", *REQUESTS]),
                ("Progress", ["- [t1] Booked TAP 1234."]),
                ("Errors", ["- `tc:t1.tc_b.result`: error"]),
                ("Key identifiers", ["- txn_8f3a2c91"]),
            ],
        ),
        (45, [("Goals / requests", ["- [t0] the first goal", "- [t2] also a hotel near E4021"])]),
    ],
)
def test_a_tight_budget_drops_paths_first_and_the_first_and_latest_request_last(
    max_tokens: int, sections: list[tuple[str, list[str]]]
) -> None:
    assert _summary(max_tokens=max_tokens) == _text("# Conversation summary", "##", sections)


def test_an_error_is_a_tool_result_with_an_errors_shape_not_notes_or_a_clean_result() -> None:
    blocks = [
        Block(
            seq=1, type="react.tool.result", turn_id="t1", path="tc:t1.tc_1.result", text="  Error: timeout"
        ),
        Block(
            seq=2,
            type="react.tool.result",
            turn_id="t1",
            path="tc:t1.tc_2.result",
            text=" " * 60 + "checked 12 files, 0 errors",
        ),
        Block(seq=3, type="react.notes", turn_id="t1", path="ar:t1.note", text="Error in my plan"),
    ]
    summary = ExtractiveSummarizer().summarize(
        blocks=blocks, previous_summary=None, max_tokens=2000, purpose="history"
    )
    errors = summary.split("## Errors\n", 1)[1].split("\n\n", 1)[0]
    assert errors == "- `tc:t1.tc_1.result`: Error: timeout"
