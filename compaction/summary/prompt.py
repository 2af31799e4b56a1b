"""What an LLM summarizer is asked (pure; shared by the Anthropic and OpenAI summarizers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.summary.base import Purpose, transcript
from compaction.summary.sections import (
    ARTIFACTS,
    CONSTRAINTS,
    IDENTIFIERS,
    NEXT_STEPS,
    SUMMARY_TITLE,
    section_list_text,
)
from timeline_app.domain.blocks import Block

SYSTEM_PROMPT = f"""\
You maintain a running summary of an LLM agent's conversation so that the agent can continue the \
work after older messages are removed from its context. Summarize progressively: when a previous \
summary is given, merge it with the new transcript into one updated summary — keep everything from \
it that still matters, update what changed, never drop the original goals.

Write concise markdown: the title `{SUMMARY_TITLE}`, then these sections, in this order, with \
exactly these headings (leave out a section that would be empty):
{section_list_text()}

Under `{IDENTIFIERS.heading}` list, one per line and copied verbatim, every identifier the agent \
may need again: invoice and order numbers, ticket ids, transaction ids, error codes, file paths and \
URLs, the most referenced and most recent first. Copy every file path, block path (like ar:…, fi:…, \
tc:…, su:…, so:…) and tool call id (tc_…) you mention exactly as written; do not invent paths.

Keep the working state the agent needs next: under `{CONSTRAINTS.heading}` copy every standing \
instruction and limit the user gave (language, budget, what never to do) verbatim, for as long as the \
conversation lasts; keep the first request and the latest request in the user's words; under \
`{NEXT_STEPS.heading}` list the steps of the newest plan that are not done, as written in the plan; \
under `{ARTIFACTS.heading}` list every file read, written or attached with its exact path and the \
last action on it; give each decision its reason; name where each error happened (block path or \
tool call). Do not address the user; output only the summary."""

SPLIT_TURN_INSTRUCTION = (
    "The transcript is the beginning of a turn that is still in progress (its later part stays "
    "in context). Summarize only what the agent needs to continue this turn: the request, the "
    "steps taken so far, their results and the paths and tool call ids involved. This summary goes "
    "under a heading of its own: write no title, and write the section headings with ### instead "
    "of ##."
)
HISTORY_INSTRUCTION = "Summarize the transcript of the conversation so far."


def user_message(blocks: Sequence[Block], previous_summary: str | None, purpose: Purpose) -> str:
    parts: list[str] = []
    if previous_summary:
        parts.append(
            "<previous_summary>\n"
            f"{previous_summary.strip()}\n"
            "</previous_summary>\n"
            "The text above is the PREVIOUS SUMMARY of earlier parts of this conversation. "
            "Merge it into your updated summary."
        )
    parts.append(f"<transcript>\n{transcript(blocks)}\n</transcript>")
    parts.append(SPLIT_TURN_INSTRUCTION if purpose == "split_turn" else HISTORY_INSTRUCTION)
    return "\n\n".join(parts)


@dataclass(frozen=True)
class CachedPrefix:
    """The context's last render, still in the provider's cache: its system prompt and its content
    parts up to its last cache breakpoint, byte for byte as the agent sent them (markers
    included). A summary request that starts with them reads them at the cache-read price."""

    system: str
    parts: tuple[dict[str, Any], ...]
    # Where the summary stops: the first block the compaction keeps (its path, or ``type#seq``).
    keep_from: str


def cached_instruction(prefix: CachedPrefix, previous_summary: str | None) -> str:
    """The summarization request that follows a cached prefix (one uncached text part)."""
    merge = (
        " The context above starts with the previous summary: merge it into your updated summary."
        if previous_summary
        else ""
    )
    return (
        f"{SYSTEM_PROMPT}\n\nSummarize the conversation above from its start up to, and not "
        f"including, the block `{prefix.keep_from}`: that block and everything after it stay in "
        f"context verbatim.{merge}"
    )
