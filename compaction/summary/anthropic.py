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

from compaction.summary.base import Purpose, SdkErrors, SummarizerError, halving_once
from compaction.summary.prompt import SYSTEM_PROMPT, CachedPrefix, cached_instruction, user_message
from timeline_app.domain.blocks import Block

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-5-5"

PROMPT_TOO_LONG = "prompt is too long"


def _is_prompt_too_long(exc: anthropic.APIStatusError) -> bool:
    if exc.status_code != 400:
        return False
    text = f"{getattr(exc, 'message', '')} {exc}".lower()
    return PROMPT_TOO_LONG in text


_ERRORS = SdkErrors(
    "anthropic", anthropic.APIStatusError, anthropic.APITimeoutError, anthropic.APIConnectionError
)


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
        http_client: Any = None,
    ):
        self.model = model
        # Set by the shell when the context's last render is still cached (history summaries
        # then send it first); the last call's usage object and whether it used the prefix.
        self.cached_prefix: CachedPrefix | None = None
        self.last_usage: dict[str, Any] | None = None
        self.last_cache = ""
        # The key lives only inside the SDK client; it is never stored on, or logged by, this object.
        self._client = client or anthropic.Anthropic(
            api_key=api_key, max_retries=max_retries, timeout=timeout, http_client=http_client
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
        self.last_usage, self.last_cache = None, ""
        if self.cached_prefix is not None and purpose == "history":
            try:
                return self._call_cached(self.cached_prefix, previous_summary, max_tokens)
            except anthropic.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code == 429:
                    raise SummarizerError(_ERRORS.short(exc)) from None
                log.info(
                    "the cached-prefix summary request was refused (%s); sending the transcript",
                    exc.status_code,
                )
            except anthropic.AnthropicError as exc:
                raise SummarizerError(_ERRORS.short(exc)) from None
        return halving_once(
            lambda part: self._call(part, previous_summary, max_tokens, purpose),
            blocks,
            errors=_ERRORS,
            sdk_error=anthropic.AnthropicError,
            too_long=_is_prompt_too_long,
        )

    def _call_cached(self, prefix: CachedPrefix, previous_summary: str | None, max_tokens: int) -> str:
        """The context's cached prefix byte for byte, then the instruction (cache-read priced)."""
        instruction = {"type": "text", "text": cached_instruction(prefix, previous_summary)}
        content: Any = [*prefix.parts, instruction]
        create: Any = self._client.messages.create
        if prefix.system:
            message: Any = create(
                model=self.model,
                max_tokens=max_tokens,
                system=prefix.system,
                messages=[{"role": "user", "content": content}],
            )
        else:
            message = create(
                model=self.model, max_tokens=max_tokens, messages=[{"role": "user", "content": content}]
            )
        text = self._text(message)
        self.last_cache = "warm"
        return text

    def _call(
        self, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        message: Any = self._client.messages.create(
            model=self.model,
            max_tokens=max_tokens,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": user_message(blocks, previous_summary, purpose)}],
        )
        text = self._text(message)
        self.last_cache = "cold"
        return text

    def _text(self, message: Any) -> str:
        usage: Any = getattr(message, "usage", None)
        self.last_usage = (
            usage.model_dump(mode="json") if usage is not None and hasattr(usage, "model_dump") else None
        )
        text = "".join(
            getattr(part, "text", "") for part in message.content if getattr(part, "type", "") == "text"
        ).strip()
        if not text:
            raise SummarizerError("anthropic returned an empty summary")
        return text
