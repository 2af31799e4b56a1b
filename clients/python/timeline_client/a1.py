"""a1 (``a1-compiler``, Python >= 3.12) with its contexts in the timeline service (extra ``a1``).

::

    from a1 import set_runtime
    from timeline_client import TimelineClient
    from timeline_client.a1 import TimelineRuntime

    set_runtime(TimelineRuntime(TimelineClient(url, api_key), "conv_id"))

The rest of the a1 code stays as it is: ``get_context(name)``, ``new_context(label,
branch_from=...)``, ``Context.user/assistant/tool/system/append/extend/clear``, ``runtime.jit``
and ``runtime.execute`` keep working on ``runtime.CTX``, and every change is stored at once in
the conversation's named context of the same name. A fresh ``TimelineRuntime`` for the same
conversation, in any process, starts with every context restored (message ids, timestamps,
roles, tool calls and ``tool_call_id`` in order).

How it hooks in: a1 persists a context by calling ``Context._save()`` after every ``append``,
``extend`` and ``clear`` when ``keep_updated`` is on, through the ``_runtime_save`` callback its
runtime sets (that is how ``Runtime.from_file(..., keep_updated=True)`` works). Every context that
enters this runtime's ``CTX`` gets that callback, pointing at :meth:`TimelineRuntime._sync`, which
compares the context's message ids with those the service holds and sends the difference:
appended messages (``POST …/messages/``, idempotent by ``message_id``, so a retried call never
stores twice), a clear (``DELETE …/messages/``), messages taken off the end (``…/messages/pop/``).

Compaction runs in the service: the runtime's ``compact`` strategy becomes the contexts'
``compaction_strategy`` (:func:`strategy_config` says how each a1 ``Compact`` maps), and where a1
would rewrite ``context.messages`` in the agent process the runtime reads the context's view back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a1 import Runtime
from a1.context import BaseCompact, Compact, SlidingWindowCompact, SummarizationCompact
from a1.context import Context as A1Context
from a1.models import Message as A1Message

from timeline_client.contexts import ClientOrTransport, Context, conversation_path, requester
from timeline_client.contexts import Message as StoredMessage
from timeline_client.http import TimelineAPIError, Transport
from timeline_client.types import ContextAnswer, ContextsAnswer, MessagesAnswer

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

__all__ = [
    "ServiceStrategy",
    "TimelineRuntime",
    "TimelineSyncError",
    "TruncateOldest",
    "strategy_config",
]


class TimelineSyncError(RuntimeError):
    """A context was changed in a way the service cannot store: its messages are neither the stored
    ones plus new ones, nor the stored ones less some at the end, nor empty."""


class TruncateOldest(Compact):
    """Keep the newest ``max_messages`` of each context (a1's documentation names this strategy;
    a1-compiler 0.1.6 does not ship it). Maps to the service's ``truncate_oldest``; on a plain a1
    ``Runtime`` it truncates in place."""

    def __init__(self, max_messages: int = 100):
        self.max_messages = max_messages

    def compact(self, contexts: dict[str, A1Context]) -> dict[str, A1Context]:
        for context in contexts.values():
            if len(context) > self.max_messages:
                context.messages = context.messages[-self.max_messages :]
        return contexts


class ServiceStrategy(Compact):
    """Any strategy of the service by name, custom ones included (``TIMELINE_CUSTOM_STRATEGIES``):
    ``ServiceStrategy("keep_errors", max_messages=50)``. Runs only in the service: on a plain a1
    ``Runtime`` it changes nothing."""

    def __init__(self, name: str, **params: Any):
        self.name = name
        self.params = params

    def compact(self, contexts: dict[str, A1Context]) -> dict[str, A1Context]:
        return contexts


def strategy_config(compact: Compact) -> dict[str, Any]:
    """The service's ``compaction_strategy`` for an a1 ``Compact`` (docs/integrations.md, "a1")."""
    if isinstance(compact, ServiceCompact):
        return compact.config
    kind = type(compact)
    if kind is BaseCompact or kind is SummarizationCompact:
        # BaseCompact keeps every message: so does the service's view under "summarize", which
        # replaces old history by an LLM summary only in the render, past the threshold.
        # SummarizationCompact's own compact() is a TODO in a1 (a sliding window); its intent is
        # the service's summary. Its max_messages/keep_recent do not carry over (the service
        # counts tokens: threshold, keep_recent_tokens).
        return {"name": "summarize"}
    if kind is SlidingWindowCompact:
        assert isinstance(compact, SlidingWindowCompact)
        return {
            "name": "sliding_window",
            "window_size": compact.window_size,
            "keep_system": compact.keep_system,
        }
    if kind is TruncateOldest:
        assert isinstance(compact, TruncateOldest)
        return {"name": "truncate_oldest", "max_messages": compact.max_messages}
    if kind is ServiceStrategy:
        assert isinstance(compact, ServiceStrategy)
        return {"name": compact.name, **compact.params}
    raise TypeError(
        f"{kind.__name__} does not map to a strategy of the timeline service: register its logic "
        "as a custom strategy (TIMELINE_CUSTOM_STRATEGIES) and pass ServiceStrategy(name, **params)"
    )


def _view_limit(config: Mapping[str, Any]) -> int | None:
    """How many messages a context may hold before the strategy's view drops some (None: never)."""
    if config.get("name") == "truncate_oldest":
        return int(config["max_messages"])
    if config.get("name") == "sliding_window":
        return int(config["window_size"])
    return None


class ServiceCompact(Compact):
    """The runtime's ``compact``: the a1 strategy it was given (``strategy``) as the service's
    ``config``. a1 calls ``compact(CTX)`` after each ``jit``/``execute``; the service already
    applies the strategy, so this reads back the view of each context that may have changed."""

    def __init__(self, runtime: TimelineRuntime, strategy: Compact):
        self.runtime = runtime
        self.strategy = strategy
        self.config = strategy_config(strategy)

    def compact(self, contexts: dict[str, A1Context]) -> dict[str, A1Context]:
        limit = _view_limit(self.config)
        if limit is not None:
            for name, context in list(dict.items(contexts)):
                if len(context.messages) > limit:
                    self.runtime._refresh(name, context)
        return contexts


def _utc_text(timestamp: datetime) -> str:
    """a1 stamps ``datetime.now()`` (naive, local time): sent as the UTC instant it names."""
    return timestamp.astimezone(UTC).isoformat()


def _local_naive(text: str) -> datetime:
    """The service's UTC time as a1 keeps its own: naive, local time."""
    return datetime.fromisoformat(text).astimezone().replace(tzinfo=None)


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """An a1 tool call as OpenAI's: a1 writes both ``{id, type, function: {name, arguments}}``
    and the flat ``{id, name, arguments}`` (its own tests do)."""
    if isinstance(call.get("function"), Mapping):
        function = dict(call["function"])
    else:
        function = {"name": call.get("name", ""), "arguments": call.get("arguments", "{}")}
    if not isinstance(function.get("arguments"), str):
        function["arguments"] = json.dumps(function.get("arguments", {}), ensure_ascii=False)
    return {"id": str(call.get("id", "")), "type": "function", "function": function}


def _to_service(message: A1Message) -> dict[str, Any]:
    """One a1 message as the service stores it, with its own ``message_id`` and ``timestamp``."""
    content: Any = message.content
    if not isinstance(content, str | list) and content is not None:
        content = json.dumps(content, ensure_ascii=False)
    body: dict[str, Any] = {
        "role": message.role,
        "content": content,
        "message_id": message.message_id,
        "timestamp": _utc_text(message.timestamp),
    }
    if message.name:
        body["name"] = message.name
    if message.tool_calls:
        body["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    if message.tool_call_id:
        body["tool_call_id"] = message.tool_call_id
    return body


def _text(content: Any) -> str:
    """a1's ``Message.content`` is a string: parts' texts joined, null as ""."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return json.dumps(content, ensure_ascii=False)


def _to_a1(message: StoredMessage) -> A1Message:
    data = message.data
    return A1Message(
        role=message.role,
        content=_text(message.content),
        name=message.name,
        tool_call_id=message.tool_call_id,
        tool_calls=message.tool_calls,
        timestamp=_local_naive(str(data["timestamp"])),
        message_id=message.message_id,
    )


class _Contexts(dict[str, A1Context]):
    """``Runtime.CTX``: a dict of a1 contexts that the service backs. A context put in is created
    on the service and linked (its changes are stored); a name asked for that another process
    created is loaded; listing the names (``keys()``, iteration, ``len``) asks the service first,
    so a1's ``new_context`` picks a name no process has taken yet."""

    def __init__(self, runtime: TimelineRuntime):
        super().__init__()
        self._runtime = runtime

    def __setitem__(self, name: str, context: A1Context) -> None:
        self._runtime._adopt(name, context)
        super().__setitem__(name, context)

    def _put_loaded(self, name: str, context: A1Context) -> None:
        super().__setitem__(name, context)

    def __contains__(self, name: object) -> bool:
        if dict.__contains__(self, name):
            return True
        return isinstance(name, str) and self._runtime._load_one(name)

    def _refresh_names(self) -> None:
        self._runtime._load_missing()

    def keys(self) -> dict_keys[str, A1Context]:
        self._refresh_names()
        return super().keys()

    def items(self) -> dict_items[str, A1Context]:
        self._refresh_names()
        return super().items()

    def values(self) -> dict_values[str, A1Context]:
        self._refresh_names()
        return super().values()

    def __iter__(self) -> Iterator[str]:
        self._refresh_names()
        return super().__iter__()

    def __len__(self) -> int:
        self._refresh_names()
        return super().__len__()


class TimelineRuntime(Runtime):
    """An a1 ``Runtime`` whose contexts are the named contexts of one conversation of the service.

    ``client`` is a ``TimelineClient`` (or its ``Transport``); the conversation is created when it
    does not exist (with ``settings``, when given). ``runtime_kwargs`` are a1's (``generate``,
    ``verify``, ``cost``, ``compact``, ``executor``, ``cache_dir``, ``strategy``). A ``compact``
    given here (or through ``strategy``/``set_strategy``) becomes every context's strategy on the
    service; without one, restored contexts keep the strategy they have there.
    """

    def __init__(
        self,
        client: ClientOrTransport,
        conversation_id: str,
        *,
        settings: Mapping[str, Any] | None = None,
        **runtime_kwargs: Any,
    ):
        self._http: Transport = requester(client)
        self.conversation_id = conversation_id
        self._stored: dict[str, list[str]] = {}  # context name → message ids the service's view holds
        strategy = runtime_kwargs.get("strategy")
        self._compact_given = runtime_kwargs.get("compact") is not None or (
            strategy is not None and getattr(strategy, "compact", None) is not None
        )
        self._ensure_conversation(settings)
        super().__init__(**runtime_kwargs)
        self._load_missing()

    def __repr__(self) -> str:
        return f"TimelineRuntime({self.conversation_id!r})"

    # -- a1's attributes, service-backed

    @property  # type: ignore[override]
    def CTX(self) -> _Contexts:
        return self._contexts

    @CTX.setter
    def CTX(self, contexts: Mapping[str, A1Context]) -> None:
        current = getattr(self, "_contexts", None)
        if contexts is current:
            return
        fresh = _Contexts(self)
        self._contexts = fresh
        for name, context in dict.items(dict(contexts)):
            fresh[name] = context

    @property  # type: ignore[override]
    def compact(self) -> ServiceCompact:
        return self._compact

    @compact.setter
    def compact(self, strategy: Compact) -> None:
        if isinstance(strategy, ServiceCompact):
            strategy = strategy.strategy
        self._compact = ServiceCompact(self, strategy)
        if getattr(self, "_contexts", None) is not None:  # set_strategy() after construction
            self._compact_given = True
            for name in list(dict.keys(self._contexts)):
                self._set_strategy(name)

    # -- reading

    def get_full_context(self, labels: str | list[str] | None = None) -> list[A1Message]:
        """a1's ``get_full_context`` from the service: the messages of every context named
        ``label`` or ``label_…`` (all contexts when ``labels`` is None), each ``message_id`` once,
        in time order; contexts written by other processes included."""
        if isinstance(labels, str):
            labels = [labels]
        if labels is not None and not labels:
            return []
        params = {"labels": ",".join(labels)} if labels else None
        path = f"{conversation_path(self.conversation_id)}/full-context/"
        body = self._http.call(MessagesAnswer, "GET", path, params=params)
        return [_to_a1(StoredMessage.from_dict(m)) for m in body["messages"]]

    def reload(self) -> None:
        """Read every context again from the service (another process may have appended)."""
        for name, context in list(dict.items(self._contexts)):
            self._refresh(name, context)
        self._load_missing()

    def timeline_context(self, name: str = "main") -> Context:
        """The client's :class:`~timeline_client.contexts.Context` of a context: ``render()``,
        ``info()``, ``set_strategy()`` and the rest of the service's API."""
        return Context(self._http, self.conversation_id, name)

    # -- persistence to a file too (a1's Runtime.from_file)

    @classmethod
    def from_file(  # type: ignore[override]
        cls,
        path: str | os.PathLike[str],
        keep_updated: bool = False,
        *,
        client: ClientOrTransport,
        conversation_id: str,
        **kwargs: Any,
    ) -> TimelineRuntime:
        """a1's ``Runtime.from_file`` for a move to the service: the file's contexts
        (``{"cache_dir", "contexts": {name: [messages]}}``, as a1 writes it) are imported into
        the conversation, keeping their message ids and timestamps (so importing again stores
        nothing twice); with ``keep_updated`` the file keeps being written as a1 would."""
        file_path = Path(path)
        data: dict[str, Any] = {"contexts": {}}
        if file_path.exists():
            data = json.loads(file_path.read_text(encoding="utf-8"))
            kwargs.setdefault("cache_dir", data.get("cache_dir", ".a1"))
        runtime = cls(client, conversation_id, file_path=file_path, keep_updated=keep_updated, **kwargs)
        for name, messages in data.get("contexts", {}).items():
            runtime._import(name, [A1Message(**m) for m in messages])
        return runtime

    # -- the service side

    @property
    def _base(self) -> str:
        return conversation_path(self.conversation_id)

    def _context_path(self, name: str) -> str:
        return Context(self._http, self.conversation_id, name).path

    def _ensure_conversation(self, settings: Mapping[str, Any] | None) -> None:
        body: dict[str, Any] = {"id": self.conversation_id}
        if settings:
            body["settings"] = dict(settings)
        try:
            self._http.request("POST", "/api/v1/conversations/", json=body)
        except TimelineAPIError as exc:
            if exc.status != 409:  # 409: it exists already
                raise

    def _link(self, name: str, context: A1Context) -> None:
        """a1's own persistence hook: every append/extend/clear calls ``_save()``, which calls
        ``_runtime_save`` when set. A context read from a file with ``keep_updated`` keeps
        writing its file too."""
        writes_file = bool(context.keep_updated and context.file_path and context._runtime_save is None)

        def save() -> None:
            self._sync(name, context)
            if writes_file and context.file_path is not None:
                data = [m.model_dump(exclude_none=True, mode="json") for m in context.messages]
                context.file_path.parent.mkdir(parents=True, exist_ok=True)
                context.file_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
            if self.keep_updated and self.file_path:
                Runtime._save(self)

        context._runtime_save = save
        context.keep_updated = True

    def _adopt(self, name: str, context: A1Context) -> None:
        """A context put into ``CTX`` by a1 (``get_context``, ``new_context``, ``jit``) or by hand:
        created on the service (with the runtime's strategy), its messages stored (a branch's
        copies keep their ids and timestamps, as in a1), then linked."""
        known = self._stored.get(name)
        if known is None:
            body: dict[str, Any] = {"name": name}
            if self._compact_given:
                body["compaction_strategy"] = self._compact.config
            try:
                self._http.call(ContextAnswer, "POST", f"{self._base}/contexts/", json=body)
                self._stored[name] = []
            except TimelineAPIError as exc:
                if exc.status != 409:  # another process created it: its view is the starting point
                    raise
                restored = self._read(name)
                self._stored[name] = [m.message_id for m in restored]
                context.messages = [_to_a1(m) for m in restored] + list(context.messages)
                if self._compact_given:
                    self._set_strategy(name)
        self._link(name, context)
        self._sync(name, context)

    def _sync(self, name: str, context: A1Context) -> None:
        """Make the service's view of ``name`` hold the context's messages (module docstring)."""
        stored = self._stored.setdefault(name, [])
        ids = [m.message_id for m in context.messages]
        if ids[: len(stored)] == stored:
            new = context.messages[len(stored) :]
            if new:
                Context(self._http, self.conversation_id, name).extend(_to_service(m) for m in new)
                stored.extend(m.message_id for m in new)
            return
        if not ids:
            Context(self._http, self.conversation_id, name).clear()
            stored.clear()
            return
        if stored[: len(ids)] == ids:
            service = Context(self._http, self.conversation_id, name)
            while len(stored) > len(ids):
                service.pop()
                stored.pop()
            return
        raise TimelineSyncError(
            f"context {name!r} was rewritten (not appended to, cleared or popped): the service keeps "
            "every stored message, so a rewrite cannot be stored; use the context's strategy instead"
        )

    def _read(self, name: str) -> list[StoredMessage]:
        body = self._http.call(MessagesAnswer, "GET", f"{self._context_path(name)}/messages/")
        return [StoredMessage.from_dict(m) for m in body["messages"]]

    def _refresh(self, name: str, context: A1Context) -> None:
        """The context's messages become the service's view (its strategy applied)."""
        stored = self._read(name)
        context.messages = [_to_a1(m) for m in stored]
        self._stored[name] = [m.message_id for m in stored]

    def _put(self, name: str, messages: list[A1Message], ids: list[str]) -> None:
        context = A1Context(messages=messages)
        self._stored[name] = ids
        self._link(name, context)
        self._contexts._put_loaded(name, context)

    def _load_missing(self) -> None:
        """Every context of the conversation not yet in ``CTX``, loaded."""
        body = self._http.call(ContextsAnswer, "GET", f"{self._base}/contexts/")
        for row in body["contexts"]:
            if row["name"] == "main" and not row["stored_message_count"]:
                continue  # every conversation has a "main": a1 has none until get_context("main")
            if not dict.__contains__(self._contexts, row["name"]):
                self._load(row["name"])

    def _load_one(self, name: str) -> bool:
        """Load ``name`` when the service has it (a1's ``get_context`` on a name another process
        created); False when it does not exist."""
        try:
            self._http.call(ContextAnswer, "GET", f"{self._context_path(name)}/")
        except TimelineAPIError as exc:
            if exc.status == 404:
                return False
            raise
        self._load(name)
        return True

    def _load(self, name: str) -> None:
        try:
            stored = self._read(name)
        except TimelineAPIError as exc:
            if exc.status != 404:  # created but never written: an empty context
                raise
            stored = []
        self._put(name, [_to_a1(m) for m in stored], [m.message_id for m in stored])
        if self._compact_given:  # the runtime's strategy is every context's
            self._set_strategy(name)

    def _set_strategy(self, name: str) -> None:
        body = {"compaction_strategy": self._compact.config}
        self._http.call(ContextAnswer, "PATCH", f"{self._context_path(name)}/", json=body)

    def _import(self, name: str, messages: Sequence[A1Message]) -> None:
        """Messages of a file into context ``name``: those the service has are skipped."""
        context = self._contexts[name] if dict.__contains__(self._contexts, name) else None
        if context is None:
            self._contexts[name] = A1Context(messages=list(messages))
            return
        have = {m.message_id for m in context.messages}
        context.extend([m for m in messages if m.message_id not in have])
