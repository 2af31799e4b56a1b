"""Summarize with a primary summarizer and fall back to another on any failure (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compaction.summary.base import Summarizer, SummarizerError
from timeline_app.domain.text import ellipsize

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|(?i:x-api-key|api[_-]?key|authorization)\s*[:=]\s*\S+)")


def redact(message: str, *, limit: int = 300) -> str:
    """A short, storable error message with anything that looks like a credential removed."""
    return ellipsize(_SECRET.sub("[redacted]", message), limit)


@dataclass(frozen=True)
class SummaryOutcome:
    text: str
    summarizer: str
    model: str
    error: str | None = None
    # The provider's usage object of the call that wrote the summary (LLM summarizers that
    # expose ``last_usage``), and whether it read the context's cached prefix.
    usage: dict[str, Any] | None = None
    cache: str = ""


def summarize_with_fallback(
    primary: Summarizer | None, fallback: Summarizer, **kwargs: Any
) -> SummaryOutcome:
    """Summarize with ``primary``; on any failure use ``fallback`` and keep a safe error message.

    ``kwargs`` are :meth:`Summarizer.summarize`'s keyword arguments.
    """
    error: str | None = None
    if primary is not None:
        try:
            text = primary.summarize(**kwargs)
        except SummarizerError as exc:
            error = redact(str(exc) or type(exc).__name__)
        except Exception as exc:  # any bug or transport failure: degrade, do not fail the render
            error = redact(f"{type(exc).__name__}: {exc}")
        else:
            if text.strip():
                return SummaryOutcome(
                    text=text,
                    summarizer=primary.name,
                    model=primary.model,
                    usage=getattr(primary, "last_usage", None),
                    cache=getattr(primary, "last_cache", ""),
                )
            error = "empty summary"
    text = fallback.summarize(**kwargs)
    return SummaryOutcome(text=text, summarizer=fallback.name, model=fallback.model, error=error)
