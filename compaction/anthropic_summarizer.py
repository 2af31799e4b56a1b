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

from compaction.summarizers import Purpose, SummarizerError
from compaction.summary_prompt import SYSTEM_PROMPT, user_message
from timeline_app.rendering.blocks import Block

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-4-5"

PROMPT_TOO_LONG = "prompt is too long"


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
            messages=[{"role": "user", "content": user_message(blocks, previous_summary, purpose)}],
        )
        text = "".join(
            getattr(part, "text", "") for part in message.content if getattr(part, "type", "") == "text"
        ).strip()
        if not text:
            raise SummarizerError("anthropic returned an empty summary")
        return text
