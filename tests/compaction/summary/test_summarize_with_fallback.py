"""Fallback to the extractive summary when the primary summarizer fails."""

from __future__ import annotations

from collections.abc import Sequence

from compaction.summary import ExtractiveSummarizer, Purpose, SummarizerError, summarize_with_fallback
from tests.builders import Stream
from timeline_app.domain.blocks import Block


class Failing:
    name = "failing"
    model = "m-1"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def summarize(
        self, *, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        raise self.exc


class Fixed:
    name = "fixed"
    model = "m-2"

    def summarize(
        self, *, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        return "primary summary"


def kwargs() -> dict[str, object]:
    s = Stream()
    s.sized_turn("t1")
    return {"blocks": s.blocks, "previous_summary": None, "max_tokens": 800, "purpose": "history"}


def test_primary_success_is_used() -> None:
    out = summarize_with_fallback(Fixed(), ExtractiveSummarizer(), **kwargs())
    assert (out.text, out.summarizer, out.model, out.error) == ("primary summary", "fixed", "m-2", None)


def test_summarizer_error_falls_back_and_carries_the_message() -> None:
    out = summarize_with_fallback(
        Failing(SummarizerError("anthropic API error 529 (overloaded_error)")),
        ExtractiveSummarizer(),
        **kwargs(),
    )
    assert out.summarizer == "extractive"
    assert out.error == "anthropic API error 529 (overloaded_error)"
    assert "please do t1" in out.text


def test_any_exception_falls_back_and_never_carries_a_key() -> None:
    exc = RuntimeError("boom with x-api-key: sk-ant-api03-SECRETSECRET and more")
    out = summarize_with_fallback(Failing(exc), ExtractiveSummarizer(), **kwargs())
    assert out.summarizer == "extractive"
    assert out.error is not None and out.error.startswith("RuntimeError: boom")
    assert "SECRET" not in out.error


def test_no_primary_uses_the_fallback_without_error() -> None:
    out = summarize_with_fallback(None, ExtractiveSummarizer(), **kwargs())
    assert out.summarizer == "extractive" and out.error is None


class Blank(Fixed):
    def summarize(
        self, *, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Purpose
    ) -> str:
        return " \n "


def test_exact_errors_and_the_fallbacks_name_and_model() -> None:
    fallback = ExtractiveSummarizer()
    wordless = summarize_with_fallback(Failing(SummarizerError()), fallback, **kwargs())
    assert (wordless.error, wordless.summarizer, wordless.model) == (
        "SummarizerError",
        "extractive",
        fallback.model,
    )
    blank = summarize_with_fallback(Blank(), fallback, **kwargs())
    assert (blank.error, blank.summarizer) == ("empty summary", "extractive")
    secret = summarize_with_fallback(
        Failing(RuntimeError("x-api-key: sk-ant-0123456789")), fallback, **kwargs()
    )
    assert secret.error == "RuntimeError: [redacted]"
