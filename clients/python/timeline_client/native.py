"""A native render as the SDK call's keyword arguments (see ``TimelineClient.render``)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from timeline_client.types import RenderAnswer

NativeFormat = Literal["anthropic_messages", "openai_responses", "openai_chat", "gemini_contents"]
NATIVE_FORMATS: tuple[str, ...] = get_args(NativeFormat)


class NativeRequest(dict[str, Any]):
    """A native render as the SDK call's keyword arguments; ``render`` is the whole answer
    (``tokens``, ``cache_points``, ``compaction``, ``pruning``, ``cache``)."""

    def __init__(self, answer: RenderAnswer):
        super().__init__(answer["request"])
        self.render = answer
