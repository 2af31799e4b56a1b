"""Summarizers for the compaction shell tests and the worker e2e test.

``SlowSummarizer`` is importable by a real worker through ``TIMELINE_SUMMARIZER_CLASS``; its delay
comes from ``TIMELINE_TEST_SLOW_SUMMARY_SECONDS`` (read here, in test code only).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection

from compaction.summary import ExtractiveSummarizer, Summarizer
from timeline_app.domain.blocks import Block

CURRENT = "tests.services.compaction.summarizers.current"


class BlockingSummarizer:
    """Extractive summaries, but each call waits until the test sets ``release``.

    ``entered`` is set when a call starts; ``in_transaction`` records, per call, whether a
    database transaction was open while summarizing (it never should be).
    """

    name = "blocking"
    model = "blocking-test"

    def __init__(self, *, timeout: float = 30.0) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.timeout = timeout
        self.calls = 0
        self.in_transaction: list[bool] = []
        self._lock = threading.Lock()

    def summarize(
        self, *, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Any
    ) -> str:
        with self._lock:
            self.calls += 1
        self.in_transaction.append(connection.in_atomic_block)
        self.entered.set()
        if not self.release.wait(self.timeout):
            raise AssertionError("the test never released the summarizer")
        return ExtractiveSummarizer().summarize(
            blocks=blocks, previous_summary=previous_summary, max_tokens=max_tokens, purpose=purpose
        )


class SlowSummarizer:
    """Extractive summaries after ``TIMELINE_TEST_SLOW_SUMMARY_SECONDS`` (default 0) of sleep."""

    name = "slow"
    model = "slow-test"

    def __init__(self) -> None:
        self.delay = float(os.environ.get("TIMELINE_TEST_SLOW_SUMMARY_SECONDS", "0") or 0)

    def summarize(
        self, *, blocks: Sequence[Block], previous_summary: str | None, max_tokens: int, purpose: Any
    ) -> str:
        time.sleep(self.delay)
        return ExtractiveSummarizer().summarize(
            blocks=blocks, previous_summary=previous_summary, max_tokens=max_tokens, purpose=purpose
        )


_current: list[Summarizer] = []


def current() -> Summarizer:
    """The factory ``TIMELINE_SUMMARIZER_CLASS`` points at in tests: the summarizer of ``use()``."""
    return _current[-1]


@contextmanager
def use(summarizer: Summarizer) -> Iterator[Summarizer]:
    """Make ``summarizer`` the configured one (with ``TIMELINE_SUMMARIZER_CLASS=CURRENT``)."""
    from django.test import override_settings

    _current.append(summarizer)
    try:
        with override_settings(TIMELINE_SUMMARIZER_CLASS=CURRENT):
            yield summarizer
    finally:
        _current.pop()
