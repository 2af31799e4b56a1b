"""Custom compaction strategies the tests register through ``TIMELINE_CUSTOM_STRATEGIES``."""

from __future__ import annotations

from typing import Any


def users_only(messages: list[dict[str, Any]], *, keep: int = 2) -> list[dict[str, Any]]:
    """The newest ``keep`` user messages, returned as the message dicts."""
    return [m for m in messages if m["role"] == "user"][-keep:]


def every_tool_result(messages: list[dict[str, Any]]) -> list[int]:
    """Only the tool results, by index: the shell widens each to its whole tool group."""
    return [i for i, m in enumerate(messages) if m["role"] == "tool"]


def broken(messages: list[dict[str, Any]]) -> list[int]:
    raise RuntimeError("this strategy always fails")
