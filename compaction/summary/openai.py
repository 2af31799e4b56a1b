"""The OpenAI-compatible summarizer: the only module that imports ``openai``.

Any server that speaks OpenAI's Chat Completions API: OpenAI, Azure OpenAI, OpenRouter, vLLM,
Ollama… (``base_url``). The same contract as the Anthropic summarizer: the SDK's own retries
(429, 5xx, 408/409 and timeouts, exponential backoff with jitter honouring ``retry-after``,
``max_retries`` times); after the last try :class:`SummarizerError` with a short message (status
code and error type only, never the key, the prompt or the body); the caller falls back to the
extractive summary. A context-length error is retried once with the newer half of the transcript.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import openai

from compaction.summary.base import Purpose, SdkErrors, SummarizerError, halving_once
from compaction.summary.prompt import SYSTEM_PROMPT, user_message
from timeline_app.domain.blocks import Block

DEFAULT_MODEL = "gpt-4.1-mini"
TokenLimitParam = Literal["max_completion_tokens", "max_tokens"]
CONTEXT_TOO_LONG = ("context_length_exceeded", "maximum context length", "context window")


def _is_context_too_long(exc: openai.APIStatusError) -> bool:
    if exc.status_code != 400:
        return False
    text = f"{getattr(exc, 'code', '')} {getattr(exc, 'message', '')} {exc}".lower()
    return any(marker in text for marker in CONTEXT_TOO_LONG)


_ERRORS = SdkErrors(
    "openai",
    openai.APIStatusError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    kind_attributes=("type", "code"),
)


class OpenAISummarizer:
    """Summaries from a Chat Completions endpoint (one non-streaming call per summary)."""

    name = "openai"

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout: float = 60.0,
        token_limit_param: TokenLimitParam = "max_completion_tokens",
        client: openai.OpenAI | None = None,
    ):
        self.model = model
        self.token_limit_param = token_limit_param
        # The key lives only inside the SDK client; it is never stored on, or logged by, this object.
        self._client = client or openai.OpenAI(
            api_key=api_key or "unused", base_url=base_url or None, max_retries=max_retries, timeout=timeout
        )

    def __repr__(self) -> str:
        return f"OpenAISummarizer(model={self.model!r})"

    def summarize(
        self,
        *,
        blocks: Sequence[Block],
        previous_summary: str | None,
        max_tokens: int,
        purpose: Purpose = "history",
    ) -> str:
        return halving_once(
            lambda part: self._call(part, previous_summary, max_tokens, purpose),
            blocks,
            errors=_ERRORS,
            sdk_error=openai.OpenAIError,
            too_long=_is_context_too_long,
        )

    def _call(
        self, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        limit: dict[str, Any] = {self.token_limit_param: max_tokens}
        completion: Any = self._client.chat.completions.create(
            model=self.model,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user_message(blocks, previous_summary, purpose)},
            ],
            **limit,
        )
        choices = getattr(completion, "choices", None) or []
        text = (getattr(choices[0].message, "content", None) or "").strip() if choices else ""
        if not text:
            raise SummarizerError("openai returned an empty summary")
        return text
