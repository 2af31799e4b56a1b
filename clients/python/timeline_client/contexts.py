"""Named contexts of OpenAI-format messages, the seed 004 ``Context`` API over HTTP.

Every append goes to the service at once (the service is the store); ``len()`` and iteration read
the context's view back, so several processes can share one context::

    client = TimelineClient("http://127.0.0.1:8000", api_key)
    ctx = get_context(client, "conv_1")          # "main"
    ctx.user("What is 2+2?")
    ctx.assistant("4")
    for msg in ctx:
        print(msg.role, msg.content, msg.timestamp)
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload
from urllib.parse import quote

from timeline_client.http import TimelineAPIError, Transport
from timeline_client.native import NATIVE_FORMATS, NativeFormat, NativeRequest
from timeline_client.timelines import TimelineClient, reply_body, tool_results_body
from timeline_client.types import (
    BlockAnswer,
    BlocksAnswer,
    ContextAnswer,
    ContextsAnswer,
    MessagesAnswer,
    RenderAnswer,
    ReplyAnswer,
)

IMPORT_CHUNK = 100
ADDED_FIELDS = ("timestamp", "message_id")
"""The keys the service adds to an OpenAI message: not part of the message sent to a model."""

ClientOrTransport = TimelineClient | Transport


def requester(client_or_transport: ClientOrTransport) -> Transport:
    """A ``Transport``, or the one a ``TimelineClient`` holds."""
    if isinstance(client_or_transport, Transport):
        return client_or_transport
    if isinstance(client_or_transport, TimelineClient):
        return client_or_transport.transport
    raise TypeError("expected a Transport or a TimelineClient")


def conversation_path(conversation: str) -> str:
    return f"/api/v1/conversations/{quote(conversation, safe='')}"


@dataclass(frozen=True)
class Message:
    """One message of a context: the OpenAI fields, its ``timestamp`` and ``message_id``."""

    role: str
    content: Any
    timestamp: datetime
    message_id: str
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        return cls(
            role=str(data["role"]),
            content=data.get("content"),
            timestamp=datetime.fromisoformat(str(data["timestamp"])),
            message_id=str(data["message_id"]),
            name=data.get("name"),
            tool_calls=data.get("tool_calls"),
            tool_call_id=data.get("tool_call_id"),
            data=dict(data),
        )

    def to_dict(self) -> dict[str, Any]:
        """The message as stored: as given, plus ``timestamp`` and ``message_id`` (JSON-ready)."""
        return _json_copy(self.data)

    model_dump = to_dict  # the seed's spelling

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI chat message alone, ready for ``chat.completions.create(messages=…)``."""
        return {k: v for k, v in self.to_dict().items() if k not in ADDED_FIELDS}


def _json_copy(value: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON object, every value JSON-ready (tuples as lists, and so on)."""
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


def _content(value: Any) -> Any:
    """Strings and lists of content parts as they are; anything else as JSON text."""
    if value is None or isinstance(value, str | list):
        return value
    return json.dumps(value, ensure_ascii=False)


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """Fill what the seed's short form leaves out: ``id``, ``type`` and string ``arguments``."""
    function = dict(call.get("function") or {})
    if not isinstance(function.get("arguments", ""), str):
        function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
    function.setdefault("arguments", "{}")
    return {
        **call,
        "id": call.get("id") or f"call_{uuid.uuid4().hex[:24]}",
        "type": call.get("type") or "function",
        "function": function,
    }


def _from_file_message(item: Any) -> dict[str, Any]:
    """A message read from a file: keys whose value is null are dropped (except ``content``),
    so files written by other tools (``model_dump()`` with every field) import cleanly."""
    if not isinstance(item, dict):
        raise ValueError(f"a message in the file is not an object: {item!r:.80}")
    return {k: v for k, v in item.items() if v is not None or k == "content"}


class Context:
    """A named context of a conversation. Nothing is cached: the service holds the messages."""

    def __init__(
        self,
        client_or_transport: ClientOrTransport,
        conversation: str,
        name: str = "main",
        *,
        file: str | os.PathLike[str] | None = None,
    ):
        self._http = requester(client_or_transport)
        self.conversation = conversation
        self.name = name
        # With a file, every change is mirrored to it at once (``from_file(keep_updated=True)``).
        self.file = Path(file) if file is not None else None

    def __repr__(self) -> str:
        return f"Context({self.conversation!r}, {self.name!r})"

    @property
    def path(self) -> str:
        return f"{conversation_path(self.conversation)}/contexts/{quote(self.name, safe='')}"

    # -- appending

    def append(self, *messages: Mapping[str, Any]) -> list[Message]:
        """Append OpenAI messages as they are (``message_id``/``timestamp`` optional)."""
        return self.extend(messages)

    def extend(self, messages: Iterable[Mapping[str, Any]]) -> list[Message]:
        batch = [dict(m) for m in messages]
        stored: list[Message] = []
        for start in range(0, len(batch), IMPORT_CHUNK):
            body = self._http.call(
                MessagesAnswer,
                "POST",
                f"{self.path}/messages/",
                json={"messages": batch[start : start + IMPORT_CHUNK]},
            )
            stored.extend(Message.from_dict(m) for m in body["messages"])
        self._mirror()
        return stored

    def user(self, content: Any, *, name: str | None = None) -> Message:
        return self._one({"role": "user", "content": _content(content)}, name=name)

    def assistant(
        self,
        content: Any = None,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        *,
        name: str | None = None,
    ) -> Message:
        message: dict[str, Any] = {"role": "assistant", "content": _content(content)}
        if tool_calls:
            message["tool_calls"] = [_tool_call(c) for c in tool_calls]
        return self._one(message, name=name)

    def tool(self, content: Any, name: str | None = None, tool_call_id: str | None = None) -> Message:
        if not tool_call_id:
            raise ValueError("a tool message needs the tool_call_id of the call it answers")
        message: dict[str, Any] = {"role": "tool", "content": _content(content), "tool_call_id": tool_call_id}
        return self._one(message, name=name)

    def system(self, content: Any) -> Message:
        return self._one({"role": "system", "content": _content(content)})

    def _one(self, message: dict[str, Any], *, name: str | None = None) -> Message:
        if name:
            message["name"] = name
        return self.extend([message])[0]

    # -- reading

    @property
    def messages(self) -> list[Message]:
        """The context's view: its messages since the last clear, compaction strategy applied."""
        try:
            body = self._http.call(MessagesAnswer, "GET", f"{self.path}/messages/")
        except TimelineAPIError as exc:
            if self._not_created(exc):
                return []
            raise
        return [Message.from_dict(m) for m in body["messages"]]

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def to_openai(self) -> list[dict[str, Any]]:
        """The view as plain OpenAI chat messages."""
        return [m.to_openai() for m in self.messages]

    def info(self) -> ContextAnswer:
        """``{name, created_at, compaction_strategy, message_count, stored_message_count}``."""
        return self._http.call(ContextAnswer, "GET", f"{self.path}/")

    @overload
    def render(self, *, format: NativeFormat, **options: Any) -> NativeRequest: ...

    @overload
    def render(
        self, *, format: Literal["text", "anthropic", "openai"] = ..., **options: Any
    ) -> RenderAnswer: ...

    @overload
    def render(self, *, format: str, **options: Any) -> RenderAnswer | NativeRequest: ...

    def render(self, *, format: str | None = None, **options: Any) -> RenderAnswer | NativeRequest:
        """``POST …/render/`` for this context (``format="openai"`` gives chat messages; a native
        format, the SDK call's keyword arguments as a ``NativeRequest``)."""
        body = {**options, **({"format": format} if format is not None else {})}
        answer = self._http.call(RenderAnswer, "POST", f"{self.path}/render/", json=body)
        if format in NATIVE_FORMATS:
            return NativeRequest(answer)
        return answer

    # -- the native agent loop

    def record_reply(
        self,
        response: Any,
        *,
        render: RenderAnswer | NativeRequest | str | None = None,
        tools: Iterable[str] = (),
        model: str | None = None,
    ) -> ReplyAnswer:
        """``POST …/replies/`` for this context: ``TimelineClient.record_reply``."""
        body = reply_body(response, render=render, tools=tools, model=model)
        answer = self._http.call(ReplyAnswer, "POST", f"{self.path}/replies/", json=body)
        self._mirror()
        return answer

    def record_tool_results(
        self,
        results: Mapping[str, Any],
        *,
        errors: Iterable[str] | Mapping[str, Any] = (),
        images: Mapping[str, Iterable[tuple[str, bytes]]] | None = None,
    ) -> list[BlockAnswer]:
        """``POST …/tool-results/`` for this context: ``TimelineClient.record_tool_results``."""
        body = tool_results_body(results, errors=errors, images=images)
        answer = self._http.call(BlocksAnswer, "POST", f"{self.path}/tool-results/", json=body)["blocks"]
        self._mirror()
        return answer

    # -- changing the view

    def clear(self) -> None:
        """Remove every message from the view; the service keeps them stored."""
        try:
            self._http.request("DELETE", f"{self.path}/messages/")
        except TimelineAPIError as exc:
            if not self._not_created(exc):
                raise
        self._mirror()

    def pop(self) -> Message | None:
        """Take the newest message out of the view and return it (None when the view is empty);
        the service keeps it stored, and the other messages keep their ids and timestamps."""
        try:
            body = self._http.call(MessagesAnswer, "POST", f"{self.path}/messages/pop/")
        except TimelineAPIError as exc:
            if self._not_created(exc):
                return None
            raise
        self._mirror()
        return Message.from_dict(body["messages"][0]) if body["messages"] else None

    def set_strategy(self, name: str = "summarize", **params: Any) -> ContextAnswer:
        """Set the compaction strategy, e.g. ``set_strategy("truncate_oldest", max_messages=100)``."""
        body = {"compaction_strategy": {"name": name, **params}}
        return self._http.call(ContextAnswer, "PATCH", f"{self.path}/", json=body)

    def _not_created(self, exc: TimelineAPIError) -> bool:
        return exc.status == 404 and exc.details.get("context") == self.name

    # -- files

    def to_file(self, path: str | os.PathLike[str]) -> Path:
        """Write the view as a JSON list of messages (with ``timestamp`` and ``message_id``)."""
        return _write_json(Path(path), [m.to_dict() for m in self.messages])

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        client_or_transport: ClientOrTransport,
        conversation: str,
        name: str = "main",
        *,
        keep_updated: bool = False,
    ) -> Context:
        """Import a JSON list of messages into the context (a missing file imports nothing).

        Messages keep their ``message_id`` and ``timestamp`` when the file has them, so importing
        the same file again stores nothing twice. With ``keep_updated`` the file then mirrors
        the context: every later append or clear is stored on the service and written to the
        file at once.
        """
        target = Path(path)
        items = json.loads(target.read_text(encoding="utf-8")) if target.exists() else []
        if not isinstance(items, list):
            raise ValueError(f"{target} does not hold a JSON list of messages")
        context = cls(client_or_transport, conversation, name)
        if items:
            context.extend(_from_file_message(item) for item in items)
        if keep_updated:
            context.file = target
            context._mirror()
        return context

    def _mirror(self) -> None:
        if self.file is not None:
            self.to_file(self.file)


def _write_json(path: Path, value: Any) -> Path:
    """Write atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, ensure_ascii=False, indent=2)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def get_context(client_or_transport: ClientOrTransport, conversation: str, name: str = "main") -> Context:
    """The named context (created on the service by its first append)."""
    return Context(client_or_transport, conversation, name)


def new_context(
    client_or_transport: ClientOrTransport,
    conversation: str,
    label: str,
    *,
    branch_from: str | None = None,
    compaction_strategy: Mapping[str, Any] | None = None,
) -> Context:
    """A new context named ``label_a``, ``label_b``, … (the first free one), optionally starting
    with a copy of ``branch_from``'s messages (same ids, so the full context shows them once)."""
    body: dict[str, Any] = {"label": label}
    if branch_from is not None:
        body["branch_from"] = branch_from
    if compaction_strategy is not None:
        body["compaction_strategy"] = dict(compaction_strategy)
    http = requester(client_or_transport)
    created = http.call(ContextAnswer, "POST", f"{conversation_path(conversation)}/contexts/", json=body)
    return Context(http, conversation, created["name"])


def list_contexts(client_or_transport: ClientOrTransport, conversation: str) -> list[ContextAnswer]:
    """``[{name, created_at, compaction_strategy, message_count, stored_message_count}]``."""
    path = f"{conversation_path(conversation)}/contexts/"
    body = requester(client_or_transport).call(ContextsAnswer, "GET", path)
    return list(body["contexts"])


def get_full_context(
    client_or_transport: ClientOrTransport, conversation: str, labels: str | Sequence[str] | None = None
) -> list[Message]:
    """Messages of every context named ``label`` or ``label_…`` (all contexts without labels),
    deduplicated by ``message_id``, in time order."""
    if isinstance(labels, str):
        labels = [labels]
    params = {"labels": ",".join(labels)} if labels else None
    path = f"{conversation_path(conversation)}/full-context/"
    body = requester(client_or_transport).call(MessagesAnswer, "GET", path, params=params)
    return [Message.from_dict(m) for m in body["messages"]]
