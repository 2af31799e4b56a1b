"""The summarizer protocol and the transcript LLM summarizers read (pure: no Django, no SDK)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from timeline_app.domain.blocks import Block
from timeline_app.domain.text import ellipsize

log = logging.getLogger(__name__)

Purpose = Literal["history", "split_turn"]


class SummarizerError(Exception):
    """A summarizer could not produce a summary. The message is short and safe to store."""


@dataclass(frozen=True)
class SdkErrors:
    """An LLM SDK's exception classes, for :meth:`short`: the message a :class:`SummarizerError`
    carries — status code and error type only, never the key, the prompt or the response body."""

    vendor: str
    status: type[BaseException]
    timeout: type[BaseException]  # checked before ``connection`` (the SDKs' timeout is one)
    connection: type[BaseException]
    kind_attributes: tuple[str, ...] = ("type",)  # where the error type is, first set wins

    def short(self, exc: BaseException) -> str:
        if isinstance(exc, self.status):
            kinds = (getattr(exc, name, None) for name in self.kind_attributes)
            kind = next((k for k in kinds if k), None) or type(exc).__name__
            return f"{self.vendor} API error {getattr(exc, 'status_code', '?')} ({kind})"
        if isinstance(exc, self.timeout):
            return f"{self.vendor} API timeout"
        if isinstance(exc, self.connection):
            return f"{self.vendor} API connection error"
        return f"{self.vendor} error ({type(exc).__name__})"


def halving_once(
    call: Callable[[Sequence[Block]], str],
    blocks: Sequence[Block],
    *,
    errors: SdkErrors,
    sdk_error: type[BaseException],
    too_long: Callable[[Any], bool],
) -> str:
    """``call(blocks)``; when the provider answers that the prompt is too long (``too_long`` of its
    status error), once more without the older half of the blocks. Any error of the SDK becomes a
    :class:`SummarizerError` carrying ``errors.short`` (never the prompt or the response)."""
    try:
        return call(blocks)
    except sdk_error as exc:
        if not (isinstance(exc, errors.status) and too_long(exc)) or len(blocks) < 2:
            raise SummarizerError(errors.short(exc)) from None
        log.info("summary prompt too long (%d blocks); retrying with the newer half", len(blocks))
    try:
        return call(blocks[len(blocks) // 2 :])
    except sdk_error as exc:
        raise SummarizerError(errors.short(exc)) from None


@runtime_checkable
class Summarizer(Protocol):
    """``name`` and ``model`` are recorded on the compaction row; ``summarize`` returns markdown
    within ``max_tokens`` or raises :class:`SummarizerError`."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def summarize(
        self,
        *,
        blocks: Sequence[Block],
        previous_summary: str | None,
        max_tokens: int,
        purpose: Purpose,
    ) -> str: ...


# --------------------------------------------------------------------------------------------
# Transcript for LLM summarizers


def transcript(blocks: Sequence[Block], *, per_block_chars: int = 2000) -> str:
    """A compact plain-text transcript of ``blocks`` for an LLM: one header line per block
    (seq, type, author, path, tool call id, hidden) and its text trimmed to ``per_block_chars``.
    Hidden blocks show their replacement text; binary payloads are named, not inlined."""
    parts: list[str] = []
    for b in blocks:
        head = [f"[{b.seq}] {b.type}"]
        if b.author:
            head.append(f"author={b.author}")
        if b.turn_id:
            head.append(f"turn={b.turn_id}")
        if b.path:
            head.append(f"path={b.path}")
        tc = b.tool_call_id
        if tc and tc not in b.path:
            head.append(f"tool_call_id={tc}")
        status = b.meta.get("status")
        if isinstance(status, str) and status:
            head.append(f"status={status}")
        if b.hidden:
            head.append("hidden")
            body = b.replacement_text
        elif b.is_binary:
            body = f"(binary {b.mime or 'payload'}){' ' + b.text if b.text else ''}"
        else:
            body = b.text
        parts.append(
            " ".join(head) + ("\n" + ellipsize(body.strip(), per_block_chars) if body.strip() else "")
        )
    return "\n\n".join(parts)
