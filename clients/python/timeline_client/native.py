"""A native render as the SDK call's keyword arguments (see ``TimelineClient.render``)."""

from __future__ import annotations

from typing import Any

NATIVE_FORMATS = ("anthropic_messages", "openai_responses", "openai_chat")


class NativeRequest(dict[str, Any]):
    """A native render as the SDK call's keyword arguments; ``render`` is the whole answer
    (``tokens``, ``cache_points``, ``compaction``, ``pruning``, ``cache``)."""

    def __init__(self, answer: dict[str, Any]):
        super().__init__(answer["request"])
        self.render = answer
