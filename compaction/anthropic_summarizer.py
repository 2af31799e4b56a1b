"""The Anthropic (Claude) summarizer: the only module that imports ``anthropic``.

Retries of 429 (rate limit), 529 (overloaded), other 5xx, 408/409 and timeouts are the SDK's own:
exponential backoff with jitter, honouring ``retry-after``, ``max_retries`` times. After the last
try this raises :class:`SummarizerError` with a short message (status code and error type only);
the caller then falls back to the extractive summary (see ``summarize_with_fallback``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anthropic

from compaction.summarizers import Purpose, SummarizerError, transcript
from compaction.summary_sections import (
    ARTIFACTS,
    CONSTRAINTS,
    IDENTIFIERS,
    NEXT_STEPS,
    SUMMARY_TITLE,
    section_list_text,
)
from timeline_app.domain.blocks import Block

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-4-5"

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
PROMPT_TOO_LONG = "prompt is too long"


def _user_message(blocks: Sequence[Block], previous_summary: str | None, purpose: Purpose) -> str:
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


def _is_prompt_too_long(exc: anthropic.APIStatusError) -> bool:
    if exc.status_code != 400:
        return False
    text = f"{getattr(exc, 'message', '')} {exc}".lower()
    return PROMPT_TOO_LONG in text


def _short_error(exc: BaseException) -> str:
    """Status code and error type only: never the key, the prompt or the response body."""
    if isinstance(exc, anthropic.APIStatusError):
        kind = getattr(exc, "type", None) or type(exc).__name__
        return f"anthropic API error {exc.status_code} ({kind})"
    if isinstance(exc, anthropic.APITimeoutError):
        return "anthropic API timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return "anthropic API connection error"
    return f"anthropic error ({type(exc).__name__})"


class AnthropicSummarizer:
    """Summaries from Claude's Messages API (one non-streaming call per summary)."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_MODEL,
        *,
        max_retries: int = 4,
        timeout: float = 60.0,
        client: anthropic.Anthropic | None = None,
    ):
        self.model = model
        # The key lives only inside the SDK client; it is never stored on, or logged by, this object.
        self._client = client or anthropic.Anthropic(
            api_key=api_key, max_retries=max_retries, timeout=timeout
        )

    def __repr__(self) -> str:
        return f"AnthropicSummarizer(model={self.model!r})"

    def summarize(
        self,
        *,
        blocks: Sequence[Block],
        previous_summary: str | None,
        max_tokens: int,
        purpose: Purpose = "history",
    ) -> str:
        try:
            return self._call(blocks, previous_summary, max_tokens, purpose)
        except anthropic.APIStatusError as exc:
            if not _is_prompt_too_long(exc) or len(blocks) < 2:
                raise SummarizerError(_short_error(exc)) from None
            log.info("summary prompt too long (%d blocks); retrying with the newer half", len(blocks))
        except anthropic.AnthropicError as exc:
            raise SummarizerError(_short_error(exc)) from None
        # One retry without the oldest half of the transcript.
        try:
            return self._call(blocks[len(blocks) // 2 :], previous_summary, max_tokens, purpose)
        except anthropic.AnthropicError as exc:
            raise SummarizerError(_short_error(exc)) from None

    def _call(
        self, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        message: Any = self._client.messages.create(
            model=self.model,
            max_tokens=max_tokens,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": _user_message(blocks, previous_summary, purpose)}],
        )
        text = "".join(
            getattr(part, "text", "") for part in message.content if getattr(part, "type", "") == "text"
        ).strip()
        if not text:
            raise SummarizerError("anthropic returned an empty summary")
        return text
