"""An OpenAI Agents SDK session stored in the timeline service (``pip install 'timeline-service[openai-agents]'``).

::

    from agents import Agent, Runner
    from timeline_client import TimelineClient
    from timeline_client.openai_agents import TimelineSession

    session = TimelineSession("support-42", client=TimelineClient(url, api_key))
    result = await Runner.run(agent, "Where is my order?", session=session)

The session is one named context (``main`` unless ``context=`` says otherwise) of the
conversation ``session_id``, which is created on first use. Each SDK item is stored as one
OpenAI chat message, so the service's context machinery applies to it unchanged:

* a plain ``{"role": "user"|"assistant"|"system", "content": "<text>"}`` item is stored as it is;
* every other item (assistant output messages, ``function_call``, ``function_call_output``,
  reasoning, hosted tool calls, …) is stored as its exact JSON in the message's ``content``,
  with ``name`` set to :data:`ITEM_NAME`; a call (an item with a ``call_id`` whose type ends in
  ``_call``) becomes an assistant message with ``tool_calls`` and its output (type ending in
  ``_output``) a ``tool`` message answering that call id. The service's strategies and its
  compaction therefore never separate a call from its output, search finds an item's words, and
  ``timeline-mcp`` or ``GET …/blocks/?path=ar:msg.<message_id>`` reads any item back.

``get_items`` returns what the context's compaction strategy leaves: with ``summarize`` (the
default) the context is rendered (``format=openai``), so once it grows past the conversation's
``threshold × max_tokens`` the oldest items come back as one user message holding the summary,
followed by the retained items (the originals stay stored and readable by path); with
``truncate_oldest`` / ``sliding_window`` / a custom strategy it is the strategy's view. Items
always come back exactly as they were added, and a call is never returned without its output
(nor an output without its call).

``pop_item`` and ``clear_session`` follow the SDK: ``clear_session`` empties the view and
``pop_item`` takes the newest item out of it (one request, ``POST …/messages/pop/``; the other
items are not rewritten and keep their timestamps). The service never deletes a stored message:
both stay stored, visible to support staff. As with the SDK's own sessions, popping an output
leaves its call waiting for one (``get_items`` never returns an output without its call).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agents.memory.session_settings import SessionSettings, resolve_session_limit

from timeline_client.contexts import ADDED_FIELDS, Context
from timeline_client.http import TimelineAPIError
from timeline_client.timelines import TimelineClient
from timeline_client.types import UsageReportAnswer

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

ITEM_NAME = "openai_agents_item"
"""``name`` of a stored message whose ``content`` is the exact JSON of an SDK item."""

_PLAIN_ROLES = ("user", "assistant", "system")
POPPED = "popped"  # the hide reason of a popped message's block


def _storable(text: str) -> bool:
    """The service stores no NUL character and no lone surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _item_json(item: Mapping[str, Any]) -> str:
    text = json.dumps(item, ensure_ascii=False)  # NUL is escaped; a lone surrogate is not
    return text if _storable(text) else json.dumps(item)


def _is_call(item: Mapping[str, Any]) -> bool:
    return isinstance(item.get("call_id"), str) and str(item.get("type", "")).endswith("_call")


def _is_output(item: Mapping[str, Any]) -> bool:
    return isinstance(item.get("call_id"), str) and str(item.get("type", "")).endswith("_output")


def item_to_message(item: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI chat message that stores one SDK item (see the module docstring)."""
    content = item.get("content")
    if (
        set(item) == {"role", "content"}
        and item["role"] in _PLAIN_ROLES
        and isinstance(content, str)
        and _storable(content)
    ):
        return dict(item)
    text = _item_json(item)
    if _is_call(item):
        arguments = item.get("arguments", item.get("input", item.get("action", "")))
        name = item.get("name") or item.get("type")
        call = {
            "id": item["call_id"],
            "type": "function",
            "function": {
                "name": str(name),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        return {"role": "assistant", "content": text, "name": ITEM_NAME, "tool_calls": [call]}
    if _is_output(item):
        return {"role": "tool", "content": text, "name": ITEM_NAME, "tool_call_id": item["call_id"]}
    role = item.get("role")
    if role == "developer":
        role = "system"
    if role not in _PLAIN_ROLES:
        role = "assistant"  # reasoning, hosted tool calls and other model output
    return {"role": role, "content": text, "name": ITEM_NAME}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping) and "text" in part
        )
    return ""


def message_to_item(message: Mapping[str, Any]) -> dict[str, Any]:
    """The SDK item a stored (or rendered) message stands for.

    A message written by :func:`item_to_message` gives its item back exactly. A message the
    service made up in a render — the compaction summary, a hidden item shown as its replacement
    text — becomes the closest item: a user message with the text, or for a hidden call or
    output the ``function_call`` / ``function_call_output`` carrying the replacement text.
    """
    content = message.get("content")
    if message.get("name") == ITEM_NAME and isinstance(content, str):
        try:
            item = json.loads(content)
        except ValueError:
            item = None
        if isinstance(item, dict):
            return item
    if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
        return {
            "type": "function_call_output",
            "call_id": message["tool_call_id"],
            "output": _text_of(content),
        }
    calls = message.get("tool_calls")
    if message.get("role") == "assistant" and isinstance(calls, list) and calls:
        function = calls[0].get("function", {})
        return {
            "type": "function_call",
            "call_id": calls[0].get("id"),
            "name": function.get("name"),
            "arguments": function.get("arguments", ""),
        }
    if message.get("name") != ITEM_NAME and isinstance(content, str) and message.get("role") in _PLAIN_ROLES:
        return {k: v for k, v in message.items() if k not in ADDED_FIELDS}
    role = message.get("role")
    return {"role": role if role in _PLAIN_ROLES else "user", "content": _text_of(content)}


def keep_pairs(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` without an output whose call is not among them (a compaction summarized it)."""
    calls = {item["call_id"] for item in items if _is_call(item)}
    return [item for item in items if not _is_output(item) or item["call_id"] in calls]


def latest(items: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` items, less where the cut would fall between a call and its output:
    the window then starts after that output (so it may hold fewer than ``limit`` items)."""
    if limit <= 0:
        return []
    start = max(len(items) - limit, 0)
    call_at: dict[str, int] = {}
    blocked_until = -1  # positions i with call_at < i <= output position are inside a pair
    for position, item in enumerate(items):
        if _is_call(item):
            call_at[item["call_id"]] = position
        elif _is_output(item) and call_at.get(item["call_id"], position) < start <= position:
            blocked_until = max(blocked_until, position)
    return list(items[max(start, blocked_until + 1) :])


class TimelineSession:
    """The Agents SDK ``Session`` protocol over a named context of the timeline service.

    ``TimelineSession(session_id, client=TimelineClient(url, key))``; ``context`` names the
    context (default ``main``); ``settings`` are the conversation settings used when the session
    creates the conversation (e.g. ``{"max_tokens": 128000}``); ``session_settings`` as in the SDK
    (its ``limit`` is the default of ``get_items``).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        client: TimelineClient,
        context: str = "main",
        settings: Mapping[str, Any] | None = None,
        session_settings: SessionSettings | None = None,
    ):
        self.session_id = session_id
        self.client = client
        self.context = Context(client, session_id, context)
        self.settings = dict(settings) if settings else None
        self.session_settings = session_settings or SessionSettings()
        self._conversation_ready = False
        # The render behind the latest get_items (``summarize`` strategy): what report_usage reports on.
        self.last_render_id: str | None = None

    def __repr__(self) -> str:
        return f"TimelineSession({self.session_id!r}, context={self.context.name!r})"

    # -- the Session protocol

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items the context's strategy leaves (see the module docstring), oldest first;
        with ``limit`` the newest ``limit`` of them, a call never without its output."""
        return await asyncio.to_thread(self.get_items_sync, limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await asyncio.to_thread(self.add_items_sync, items)

    async def pop_item(self) -> TResponseInputItem | None:
        return await asyncio.to_thread(self.pop_item_sync)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self.clear_session_sync)

    # -- beyond the protocol

    async def get_all_items(self) -> list[TResponseInputItem]:
        """Every item added since the last clear, exactly, whatever the strategy or a compaction
        shows (the full history ``get_items`` would return without compaction)."""
        return await asyncio.to_thread(self.get_all_items_sync)

    def report_usage(self, result: Any, *, model: str | None = None) -> UsageReportAnswer | None:
        """Report what a run cost against the render its items came from (the latest
        ``get_items``): ``result`` is the ``RunResult`` (its ``context_wrapper.usage``) or an
        ``agents.usage.Usage``; the model is the run's last agent's when it is a name, else give
        ``model``. The framework exposes the run's total, so a run of several model calls reports
        them all on that one render. None when there is no render to report on (another
        strategy, or no ``get_items`` yet). Blocking; safe to repeat."""
        if self.last_render_id is None:
            return None
        wrapper = getattr(result, "context_wrapper", None)
        usage = getattr(wrapper, "usage", None) if wrapper is not None else result
        details = getattr(usage, "input_tokens_details", None)
        body = {
            "input_tokens": int(getattr(usage, "input_tokens", 0)),
            "output_tokens": int(getattr(usage, "output_tokens", 0)),
            "total_tokens": int(getattr(usage, "total_tokens", 0)),
            "input_tokens_details": {"cached_tokens": int(getattr(details, "cached_tokens", 0) or 0)},
        }
        agent_model = getattr(getattr(result, "last_agent", None), "model", None)
        name = model or (agent_model if isinstance(agent_model, str) else None)
        if not name:
            raise ValueError("the run names no model: pass model=")
        return self.client.report_usage(
            self.last_render_id, body, model=name, conversation=self.session_id, context=self.context.name
        )

    # -- the same, blocking

    def get_items_sync(self, limit: int | None = None) -> list[Any]:
        effective = resolve_session_limit(limit, self.session_settings)
        try:
            strategy = self.context.info()["compaction_strategy"].get("name", "summarize")
            if strategy == "summarize":
                rendered = self.context.render(format="openai", include_sources=False, include_announce=False)
                messages = rendered["blocks"]
                self.last_render_id = rendered.get("render_id")
            else:
                messages = [m.to_dict() for m in self.context.messages]
        except TimelineAPIError as exc:
            if _not_found(exc):  # no conversation or no context yet: an empty session
                return []
            raise
        items = keep_pairs([message_to_item(m) for m in messages])
        if effective is None or effective < 0:
            return items
        return latest(items, effective)

    def add_items_sync(self, items: Sequence[Any]) -> None:
        if not items:
            return
        self._ensure_conversation()
        self.context.extend(item_to_message(_as_dict(item)) for item in items)

    def pop_item_sync(self) -> Any | None:
        try:
            popped = self.context.pop()
        except TimelineAPIError as exc:
            if _not_found(exc):  # no conversation yet: an empty session
                return None
            raise
        return message_to_item(popped.to_dict()) if popped is not None else None

    def get_all_items_sync(self) -> list[Any]:
        return [message_to_item(m) for m in self._stored_messages()]

    def clear_session_sync(self) -> None:
        self.context.clear()

    # -- helpers

    def _ensure_conversation(self) -> None:
        if self._conversation_ready:
            return
        try:
            self.client.create_conversation(id=self.session_id, settings=self.settings)
        except TimelineAPIError as exc:
            if exc.status != 409:  # 409: the conversation exists already
                raise
        self._conversation_ready = True

    def _stored_messages(self) -> list[dict[str, Any]]:
        """Every message since the context's last clear (whatever its strategy shows), popped ones
        left out, in order, each with its ``timestamp`` and without its ``message_id``."""
        try:
            exported = self.client.export(self.session_id, context=self.context.name)
        except TimelineAPIError as exc:
            if _not_found(exc):
                return []
            raise
        start = int(exported.get("view_start_seq") or 0)
        messages = []
        for block in exported["blocks"]:
            meta = block.get("meta") or {}
            message = meta.get("openai_message")
            if (
                block["seq"] >= start
                and block.get("hidden_reason") != POPPED
                and isinstance(message, dict)
                and isinstance(meta.get("timestamp"), str)
            ):
                messages.append({**message, "timestamp": meta["timestamp"]})
        return messages


def _not_found(exc: TimelineAPIError) -> bool:
    """The service's own 404 (no such conversation or context), not a wrong URL's."""
    return exc.status == 404 and exc.code == "not_found"


def _as_dict(item: Any) -> dict[str, Any]:
    """An SDK item as a plain dict (items are TypedDicts; pydantic models are dumped as JSON)."""
    if isinstance(item, Mapping):
        copied: dict[str, Any] = json.loads(json.dumps(item))
        return copied
    dump = getattr(item, "model_dump", None)
    dumped = dump(mode="json", exclude_unset=True) if callable(dump) else None
    if isinstance(dumped, dict):
        return dumped
    raise TypeError(f"not a session item: {item!r:.80}")
