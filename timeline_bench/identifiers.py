"""Identifiers through a compaction (issue 12 point 16): the share the next render still shows.

Twenty identifiers (invoice and order numbers, error codes, transaction ids, file paths, ticket ids)
are planted across the prompts, tool results, notes and completions of five turns; five more turns
of plain work follow. A compaction summarizes the first five turns with the extractive summarizer;
the share is the part of the twenty found in the text of the render after it. Pure: block values
and the render pipeline, no database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from compaction.digest import build_digest
from compaction.planner import CompactionPlan, plan_at_cut
from compaction.summary import ExtractiveSummarizer, Summarizer
from compaction.summary.block import build_summary_block
from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.pipeline import RenderOptions, render_window

PLANTED: tuple[str, ...] = (
    "INV-2024-0042",
    "ORD-77812",
    "CUST-99812",
    "/srv/ledger/2024/q3.csv",
    "SUP-4521",
    "txn_8f3a2c91d",
    "ERR_REFUND_WINDOW_CLOSED",
    "E4021",
    "9f86d081884c7d65",
    "/var/log/payments/refund-2024-11.log",
    "REQ-5512-AB",
    "OPS-1187",
    "https://tickets.example.com/browse/OPS-1187",
    "docs/runbooks/refunds.md",
    "ORD-77813",
    "1Z999AA10123456784",
    "UPS_GROUND_US",
    "BATCH-2024-11-17-03",
    "config/payments/gateway.yaml",
    "txn_77aa01bc",
)

# (prompt, [(notes, tool result)], completion) per turn; the identifiers sit where agents meet them.
_PLANTED_TURNS: tuple[tuple[str, list[tuple[str, dict[str, str]]], str], ...] = (
    (
        "Please reconcile invoice INV-2024-0042 against order ORD-77812.",
        [
            (
                "Looking the invoice up in the ledger.",
                {"invoice": "INV-2024-0042", "customer_ref": "CUST-99812"},
            ),
            ("Ticket SUP-4521 mentions a duplicate charge.", {"ledger_file": "/srv/ledger/2024/q3.csv"}),
        ],
        "The invoice is paid. Transaction txn_8f3a2c91d settled it and the order shipped.",
    ),
    (
        "Why did the refund for that order fail?",
        [
            ("Checking the refund attempts.", {"error": "ERR_REFUND_WINDOW_CLOSED", "code": "E4021"}),
            (
                "The logs in /var/log/payments/refund-2024-11.log show three retries.",
                {"trace_id": "9f86d081884c7d65", "status": "failed"},
            ),
        ],
        "The refund failed because the window closed. The gateway answered request REQ-5512-AB with a 502.",
    ),
    (
        "Open a ticket for the gateway team.",
        [("Filing it.", {"ticket": "OPS-1187", "url": "https://tickets.example.com/browse/OPS-1187"})],
        "Ticket opened. Next time follow docs/runbooks/refunds.md before retrying.",
    ),
    (
        "Where is the replacement shipment for order ORD-77813?",
        [("Asking the carrier.", {"tracking": "1Z999AA10123456784", "service": "UPS_GROUND_US"})],
        "It is in transit and arrives on Friday.",
    ),
    (
        "Reprocess the failed batch and tell me what changed.",
        [
            ("Batch BATCH-2024-11-17-03 is the failed one.", {"status": "reprocessed"}),
            (
                "Reading the gateway settings.",
                {"config": "config/payments/gateway.yaml", "txn": "txn_77aa01bc"},
            ),
        ],
        "Done. The batch went through after the timeout was raised.",
    ),
)
_FILLER = (
    "The service answered with the usual paginated listing of records, each with a status, an "
    "amount, a currency, a created date and a free-text description that repeats what the user "
    "already knows about the account and its history. "
)
PLAIN_TURNS = 5
SETTINGS = RenderSettings(max_tokens=20_000, summary_max_tokens=800)


@dataclass(frozen=True)
class IdentifierShare:
    visible: tuple[str, ...]
    planted: tuple[str, ...]
    summary_tokens: int
    summary_max_tokens: int

    @property
    def share(self) -> float:
        return len(self.visible) / len(self.planted)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(i for i in self.planted if i not in self.visible)


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, type_: str, turn_id: str, **kw: Any) -> None:
        block = Block(seq=len(self.blocks) + 1, type=type_, turn_id=turn_id, ts="2026-11-17T09:00:00Z", **kw)
        self.blocks.append(replace(block, tokens=block_tokens(block)))

    def turn(
        self, turn_id: str, prompt: str, rounds: list[tuple[str, dict[str, str]]], completion: str
    ) -> None:
        self.add(b.TURN_HEADER, turn_id, author="system", path=b.turn_header_path(turn_id))
        self.add(b.USER_PROMPT, turn_id, author="user", text=prompt, path=b.user_prompt_path(turn_id))
        for k, (notes, result) in enumerate(rounds):
            call = f"tc_{turn_id}_{k}"
            self.add(b.NOTES, turn_id, author="react", text=notes, path=b.notes_path(turn_id, call))
            self.add(
                b.TOOL_CALL,
                turn_id,
                author="react",
                mime="application/json",
                text=json.dumps({"tool_id": "billing.lookup", "params": {"step": k}}),
                path=b.tool_call_path(turn_id, call),
                meta={"tool_id": "billing.lookup"},
            )
            payload = {**result, "records": _FILLER * 6}
            self.add(
                b.TOOL_RESULT,
                turn_id,
                author="tool",
                mime="application/json",
                text=json.dumps(payload, sort_keys=True),
                path=b.tool_result_path(turn_id, call),
                meta={"tool_id": "billing.lookup"},
            )
        self.add(
            b.ASSISTANT_COMPLETION,
            turn_id,
            author="assistant",
            text=completion,
            path=b.completion_path(turn_id),
        )


def planted_timeline() -> tuple[list[Block], int]:
    """The blocks, and the index of the first block of the first plain turn (where the cut goes)."""
    builder = _Builder()
    for n, (prompt, rounds, completion) in enumerate(_PLANTED_TURNS, start=1):
        builder.turn(f"turn_{n}", prompt, rounds, completion)
    cut = len(builder.blocks)
    for n in range(len(_PLANTED_TURNS) + 1, len(_PLANTED_TURNS) + 1 + PLAIN_TURNS):
        rounds = [(f"Step {k} of the routine check.", {"status": "ok"}) for k in range(2)]
        builder.turn(
            f"turn_{n}", "Run the routine account check again.", rounds, "All fine. Nothing changed."
        )
    return builder.blocks, cut


def compacted_window(
    blocks: list[Block], plan: CompactionPlan, *, summarizer: Summarizer, settings: RenderSettings
) -> tuple[list[Block], str]:
    """The visible window after ``plan`` (summary block first) and the summary's text."""
    text = summarizer.summarize(
        blocks=plan.summarized,
        previous_summary=plan.previous_summary.text if plan.previous_summary else None,
        max_tokens=settings.summary_max_tokens,
        purpose="history",
    )
    fields = build_summary_block(
        plan,
        summary_text=text,
        split_text=None,
        digest=build_digest(plan.compacted),
        turn_id=blocks[-1].turn_id,
    )
    summary = Block(seq=len(blocks) + 1, **fields)
    return [replace(summary, tokens=block_tokens(summary)), *plan.retained], text


def identifier_share(summarizer: Summarizer | None = None) -> IdentifierShare:
    """Compact the planted timeline at the first plain turn and count what the next render shows."""
    blocks, cut = planted_timeline()
    plan = plan_at_cut(blocks, cut, system_tokens=0, settings=SETTINGS)
    window, text = compacted_window(
        blocks, plan, summarizer=summarizer or ExtractiveSummarizer(), settings=SETTINGS
    )
    rendered = render_window(window, settings=SETTINGS, options=RenderOptions(format="text"))
    shown = "\n".join(str(part.get("text", "")) for part in rendered.blocks)
    return IdentifierShare(
        visible=tuple(i for i in PLANTED if i in shown),
        planted=PLANTED,
        summary_tokens=count_text_tokens(text),
        summary_max_tokens=SETTINGS.summary_max_tokens,
    )
