"""A native render as the SDK call's keyword arguments (see ``TimelineClient.render``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, Literal, TypeVar, get_args

from timeline_client.types import RenderAnswer, UsageReportAnswer

T = TypeVar("T")

NativeFormat = Literal["anthropic_messages", "openai_responses", "openai_chat", "gemini_contents"]
NATIVE_FORMATS: tuple[str, ...] = get_args(NativeFormat)


class NativeRequest(dict[str, Any]):
    """A native render as the SDK call's keyword arguments; ``render`` is the whole answer
    (``tokens``, ``cache_points``, ``compaction``, ``pruning``, ``cache``)."""

    def __init__(self, answer: RenderAnswer):
        super().__init__(answer["request"])
        self.render = answer


class ModelCall(Generic[T]):
    """What ``TimelineClient.retry_with_compaction`` answers: the model's ``reply`` and the
    ``render`` it was made from (a :class:`NativeRequest` for a native format, else the render
    answer), and ``usage_report`` when it reported the call's usage (``report_usage=True``).

    It unpacks as ``reply, render = …``, and it stands in for the reply: attribute and item access
    go to it (``call.content``, ``call["choices"]``), so code written when the method answered the
    reply alone keeps working; ``isinstance`` checks and type annotations need ``call.reply``.
    ``record_reply(conv, call)`` takes it whole (the reply with its render).
    """

    __slots__ = ("render", "reply", "usage_report")

    def __init__(
        self, reply: T, render: RenderAnswer | NativeRequest, usage_report: UsageReportAnswer | None = None
    ):
        self.reply = reply
        self.render = render
        self.usage_report = usage_report

    def __iter__(self) -> Iterator[Any]:
        yield self.reply
        yield self.render

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reply, name)

    def __getitem__(self, key: Any) -> Any:
        return self.reply[key]  # type: ignore[index]

    def __repr__(self) -> str:
        return f"ModelCall(reply={self.reply!r}, render_id={self.render.get('render_id')!r})"
