"""Client for the block timeline API: conversations, turns, blocks, render, compaction, read/hide/search."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

import httpx

from timeline_client.http import Transport
from timeline_client.native import NATIVE_FORMATS, ModelCall, NativeFormat, NativeRequest
from timeline_client.types import (
    BlockAnswer,
    BlocksAnswer,
    CompactionAnswer,
    CompactionQueuedAnswer,
    CompactionsPage,
    ConversationAnswer,
    ConversationDetailAnswer,
    ConversationPage,
    OperationAnswer,
    OperationsPage,
    ReadAnswer,
    RenderAnswer,
    ReplyAnswer,
    SearchAnswer,
    SearchHit,
    SourceAnswer,
    SourcesAnswer,
    TenantUsagePage,
    TenantUsageRow,
    TimelineExport,
    UsageAnswer,
    UsageReportAnswer,
)

T = TypeVar("T")

_CONTEXT_LIMIT = re.compile(
    r"prompt is too long|context_length_exceeded|maximum context length", re.IGNORECASE
)


def is_context_limit_error(exc: BaseException) -> bool:
    """True for a provider's "context too long" answer.

    Anthropic answers HTTP 400 ``invalid_request_error`` with "prompt is too long: N tokens > M
    maximum"; OpenAI uses ``context_length_exceeded``. Checked by duck typing, so the client needs
    neither SDK.
    """
    status = getattr(exc, "status_code", None)
    if status is not None and status != 400:
        return False
    texts = [str(exc), str(getattr(exc, "message", "")), str(getattr(exc, "body", ""))]
    return any(_CONTEXT_LIMIT.search(text) for text in texts)


RENDERS_REMEMBERED = 1024
USAGE_KEYS = ("input_tokens", "prompt_tokens", "prompt_token_count")


def _plain(value: Any) -> Any:
    """An SDK (pydantic) object as JSON-ready data; dicts and lists as they are."""
    to_json_dict = getattr(value, "to_json_dict", None)  # google-genai: without its unset fields
    if callable(to_json_dict):
        return to_json_dict()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def usage_of(response: Any) -> tuple[dict[str, Any], str]:
    """``(usage, model)`` of an SDK response, its dict, or a bare usage object (model "")."""
    data = _plain(response)
    if not isinstance(data, dict):
        raise TypeError("expected an SDK response, its dict, or a usage object")
    if any(key in data for key in USAGE_KEYS):
        return data, ""
    # Gemini's GenerateContentResponse: ``usage_metadata`` and ``model_version``. Its usage goes as
    # the SDK dumps it: the service reads it (and keeps it) as it reads the one in a reply given to
    # ``record_reply``, so the same call reported both ways is the same report.
    usage = _plain(data.get("usage", data.get("usage_metadata")))
    if not isinstance(usage, dict):
        raise ValueError("the response carries no usage object")
    model = data.get("model", data.get("model_version"))
    return usage, model if isinstance(model, str) else ""


def attachment(
    name: str, mime: str, *, data: bytes | None = None, text: str = "", summary: str = ""
) -> dict[str, Any]:
    """An attachment for :meth:`TimelineClient.start_turn`; ``data`` is sent as base64."""
    item: dict[str, Any] = {"name": name, "mime": mime}
    if data is not None:
        item["base64"] = base64.b64encode(data).decode()
    if text:
        item["text"] = text
    if summary:
        item["summary"] = summary
    return item


def reply_body(
    response: Any,
    *,
    render: RenderAnswer | NativeRequest | str | None = None,
    tools: Iterable[str] = (),
    model: str | None = None,
) -> dict[str, Any]:
    """The body of ``POST …/replies/`` for a reply (an SDK object, its dict, or a
    :class:`ModelCall`, whose render is taken when ``render`` is not given)."""
    if isinstance(response, ModelCall):
        render = render if render is not None else response.render
        response = response.reply
    body: dict[str, Any] = {"response": _plain(response), "tools": list(tools)}
    if render is not None:
        if isinstance(render, NativeRequest):
            render = render.render
        render_id = render if isinstance(render, str) else render["render_id"]
        if render_id is not None:
            body["render_id"] = render_id
    if model is not None:
        body["model"] = model
    return body


def tool_results_body(
    results: Mapping[str, Any],
    *,
    errors: Iterable[str] | Mapping[str, Any] = (),
    images: Mapping[str, Iterable[tuple[str, bytes]]] | None = None,
) -> dict[str, Any]:
    """The body of ``POST …/tool-results/``: ``{call_id: output}``, the failed call ids (or
    ``{call_id: error output}``), images by call id."""
    outputs = dict(results)
    failed = set(errors)
    if isinstance(errors, Mapping):
        outputs.update(errors)
    extra = images or {}
    items = []
    for call_id in dict.fromkeys([*outputs, *extra]):
        item: dict[str, Any] = {"tool_call_id": call_id, "output": outputs.get(call_id, "")}
        if call_id in failed:
            item["is_error"] = True
        if call_id in extra:
            item["images"] = [
                {"mime": mime, "base64": base64.b64encode(data).decode()} for mime, data in extra[call_id]
            ]
        items.append(item)
    return {"results": items}


class TimelineClient:
    """Typed access to ``/api/v1`` (answers: ``timeline_client.types``). Every method raises
    ``TimelineAPIError`` on a 4xx/5xx answer and ``TimelineUnavailable`` when it got no answer.

    ``context`` selects a named context (``main`` by default) on every per-timeline call. A call
    that cannot connect or is answered 503 (a dependency of the service down for a moment) is
    retried up to ``retries`` times with exponential backoff honoring ``Retry-After``, each wait at
    most ``max_backoff`` seconds (``timeline_client.http``); ``retries=0`` turns that off.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        http_client: httpx.Client | None = None,
        retries: int = 5,
        max_backoff: float = 10.0,
    ):
        self.transport = Transport(
            base_url, api_key, timeout=timeout, client=http_client, retries=retries, max_backoff=max_backoff
        )
        # render_id → (conversation, context) of the latest renders, for report_usage.
        self._renders: dict[str, tuple[str, str]] = {}

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> TimelineClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- conversations

    def create_conversation(
        self, *, id: str | None = None, title: str = "", settings: dict[str, Any] | None = None
    ) -> ConversationAnswer:
        body: dict[str, Any] = {"title": title}
        if id is not None:
            body["id"] = id
        if settings:
            body["settings"] = settings
        return self.transport.call(ConversationAnswer, "POST", "/api/v1/conversations/", json=body)

    def conversation(self, conversation: str) -> ConversationDetailAnswer:
        return self.transport.call(ConversationDetailAnswer, "GET", f"/api/v1/conversations/{conversation}/")

    def update_conversation(
        self, conversation: str, *, title: str | None = None, settings: dict[str, Any] | None = None
    ) -> ConversationDetailAnswer:
        """Change the title and/or settings; ``settings`` replaces the overrides object as a whole."""
        body: dict[str, Any] = {}
        if title is not None:
            body["title"] = title
        if settings is not None:
            body["settings"] = settings
        path = f"/api/v1/conversations/{conversation}/"
        return self.transport.call(ConversationDetailAnswer, "PATCH", path, json=body)

    def conversations(self) -> Iterable[ConversationAnswer]:
        """Every conversation of the key's tenant, newest first (follows the pages)."""
        page = self.transport.call(ConversationPage, "GET", "/api/v1/conversations/")
        while True:
            yield from page["results"]
            if not page["next"]:
                return
            cursor = httpx.URL(page["next"]).params.get("cursor")
            page = self.transport.call(
                ConversationPage, "GET", "/api/v1/conversations/", params={"cursor": cursor}
            )

    # -- one timeline

    def _path(self, conversation: str, context: str, tail: str) -> str:
        if context == "main":
            return f"/api/v1/conversations/{conversation}/{tail}"
        return f"/api/v1/conversations/{conversation}/contexts/{context}/{tail}"

    def start_turn(
        self,
        conversation: str,
        prompt: str,
        *,
        turn_id: str | None = None,
        attachments: list[dict[str, Any]] | None = None,
        context: str = "main",
    ) -> list[BlockAnswer]:
        body: dict[str, Any] = {"prompt": prompt, "attachments": attachments or []}
        if turn_id:
            body["turn_id"] = turn_id
        path = self._path(conversation, context, "turns/")
        return self.transport.call(BlocksAnswer, "POST", path, json=body)["blocks"]

    def contribute(
        self, conversation: str, blocks: list[dict[str, Any]], *, context: str = "main"
    ) -> list[BlockAnswer]:
        """Append blocks (seed 000 ``ContextBrowser.contribute``); give each an ``id`` to make retries safe."""
        path = self._path(conversation, context, "blocks/")
        return self.transport.call(BlocksAnswer, "POST", path, json={"blocks": blocks})["blocks"]

    @overload
    def render(
        self, conversation: str, *, format: NativeFormat, context: str = "main", **options: Any
    ) -> NativeRequest: ...

    @overload
    def render(
        self,
        conversation: str,
        *,
        format: Literal["text", "anthropic", "openai"] = ...,
        context: str = "main",
        **options: Any,
    ) -> RenderAnswer: ...

    @overload
    def render(
        self, conversation: str, *, format: str, context: str = "main", **options: Any
    ) -> RenderAnswer | NativeRequest: ...

    def render(
        self, conversation: str, *, format: str | None = None, context: str = "main", **options: Any
    ) -> RenderAnswer | NativeRequest:
        """Render for the next model call. Options: ``format``, ``include_sources``, ``include_announce``,
        ``cache_last``, ``force_sanitize``, ``system`` or ``system_tokens``, ``max_tokens``, ``announce``,
        ``exclude_contributions``, ``include_only_contributions``, ``now``, ``debug`` (text format: add the
        stream with its cache marks), ``model`` and ``tools_tokens`` (for the ``usage_forecast``),
        ``budget_note`` (end the uncached tail with the context's budget line).

        With a native format (``anthropic_messages``, ``openai_responses``, ``openai_chat``,
        ``gemini_contents``) the answer is a :class:`NativeRequest`: the SDK call's keyword arguments,
        ready for ``anthropic.messages.create(model=…, max_tokens=…, tools=…, **kwargs)`` (or
        ``responses.create``, ``chat.completions.create``, ``genai.Client().models.generate_content(
        model=…, **kwargs)``: ``contents`` and ``config``; add your tools to a copy of ``config``), with
        the whole render answer in ``.render``. Declare your tools under ``provider_tool_name(name)``
        (Gemini: ``gemini_tool_name(provider_tool_name(name))``; ``timeline_client.tool_names``).
        ``prefill=True`` keeps the model's message last (``anthropic_messages``, ``gemini_contents``
        otherwise end with a user message of the ``continue_text`` setting; ``.render["ending"]``)."""
        body = {**options, **({"format": format} if format is not None else {})}
        answer = self.transport.call(
            RenderAnswer, "POST", self._path(conversation, context, "render/"), json=body
        )
        render_id = answer.get("render_id")
        if isinstance(render_id, str):
            self._renders[render_id] = (conversation, context)
            while len(self._renders) > RENDERS_REMEMBERED:
                self._renders.pop(next(iter(self._renders)))
        if format in NATIVE_FORMATS:
            return NativeRequest(answer)
        return answer

    # -- cost

    def report_usage(
        self,
        render: RenderAnswer | NativeRequest | str,
        response: Any,
        *,
        model: str | None = None,
        cache_miss_reason: str | None = None,
        conversation: str | None = None,
        context: str | None = None,
    ) -> UsageReportAnswer:
        """Report what the provider billed for the call made with ``render`` (a :meth:`render`
        answer, a :class:`NativeRequest`, or its ``render_id``). ``response`` is the SDK's response (Anthropic ``Message``,
        OpenAI ``ChatCompletion`` or ``Response``), its dict, or its ``usage`` alone (then give
        ``model``). The conversation and context are remembered from :meth:`render`; give them when
        the render was made by another client. Safe to repeat: the same report answers the stored row.
        """
        if isinstance(render, NativeRequest):
            render = render.render
        render_id = render if isinstance(render, str) else render["render_id"]
        if render_id is None:
            raise ValueError("this render has no render_id to report usage on")
        if conversation is None:
            if render_id not in self._renders:
                raise ValueError(
                    "unknown render: pass conversation= (and context=) for a render made elsewhere"
                )
            conversation, remembered_context = self._renders[render_id]
            context = context or remembered_context
        usage, response_model = usage_of(response)
        body: dict[str, Any] = {"usage": usage, "model": model or response_model}
        if not body["model"]:
            raise ValueError("the response names no model: pass model=")
        if cache_miss_reason is not None:
            body["cache_miss_reason"] = cache_miss_reason
        path = self._path(conversation, context or "main", f"renders/{render_id}/usage/")
        return self.transport.call(UsageReportAnswer, "POST", path, json=body)

    def usage(self, conversation: str, *, context: str | None = None) -> UsageAnswer:
        """Totals of a conversation (every context), or of one ``context``: cost, savings, cache-read
        share, forecast accuracy, unexplained misses (with the first changed path)."""
        path = (
            self._path(conversation, context, "usage/")
            if context
            else f"/api/v1/conversations/{conversation}/usage/"
        )
        return self.transport.call(UsageAnswer, "GET", path)

    def tenant_usage(self, *, since: str | None = None, until: str | None = None) -> Iterable[TenantUsageRow]:
        """The tenant's usage per conversation for renders in ``[since, until)`` (follows the pages)."""
        params = {key: value for key, value in (("since", since), ("until", until)) if value}
        page = self.transport.call(TenantUsagePage, "GET", "/api/v1/usage/", params=params)
        while True:
            yield from page["results"]
            if not page["next"]:
                return
            cursor = httpx.URL(page["next"]).params.get("cursor")
            page = self.transport.call(
                TenantUsagePage, "GET", "/api/v1/usage/", params={**params, "cursor": cursor}
            )

    @overload
    def compact(
        self, conversation: str, *, force: bool = ..., wait: Literal[True], context: str = ...
    ) -> CompactionAnswer: ...

    @overload
    def compact(
        self, conversation: str, *, force: bool = ..., wait: Literal[False] = ..., context: str = ...
    ) -> CompactionQueuedAnswer: ...

    @overload
    def compact(
        self, conversation: str, *, force: bool = ..., wait: bool, context: str = ...
    ) -> CompactionAnswer | CompactionQueuedAnswer: ...

    def compact(
        self, conversation: str, *, force: bool = False, wait: bool = False, context: str = "main"
    ) -> CompactionAnswer | CompactionQueuedAnswer:
        """Compact now (``wait=True``: the outcome) or queue a compaction (the queued row)."""
        body = {"force": force, "wait": wait}
        path = self._path(conversation, context, "compact/")
        if wait:
            return self.transport.call(CompactionAnswer, "POST", path, json=body)
        return self.transport.call(CompactionQueuedAnswer, "POST", path, json=body)

    def compactions(self, conversation: str, *, context: str = "main") -> Iterable[CompactionAnswer]:
        """The context's compactions, newest first (every attempt; follows the pages)."""
        path = self._path(conversation, context, "compactions/")
        params: dict[str, Any] = {"limit": 200}
        while True:
            page = self.transport.call(CompactionsPage, "GET", path, params=params)
            yield from page["results"]
            if not page["next"]:
                return
            params = {**params, "cursor": httpx.URL(page["next"]).params.get("cursor")}

    def newest_applied_compaction(self, conversation: str, *, context: str = "main") -> str | None:
        """The id of the context's newest applied compaction (the one ``revert_compaction`` takes)."""
        return next(
            (
                row["id"]
                for row in self.compactions(conversation, context=context)
                if row["status"] == "applied"
            ),
            None,
        )

    def operations(
        self,
        conversation: str,
        *,
        context: str = "main",
        kinds: Sequence[str] = (),
        since: str | None = None,
        until: str | None = None,
    ) -> Iterable[OperationAnswer]:
        """The context's operations log, newest first (follows the pages): every operation that
        changed what the model sees, of ``kinds`` (all when empty), at ``since`` or later and before
        ``until`` (ISO-8601 dates or times, or epoch seconds)."""
        path = self._path(conversation, context, "operations/")
        params: dict[str, Any] = {"limit": 200}
        if kinds:
            params["kind"] = ",".join(kinds)
        params.update({name: value for name, value in (("since", since), ("until", until)) if value})
        while True:
            page = self.transport.call(OperationsPage, "GET", path, params=params)
            yield from page["results"]
            if not page["next"]:
                return
            params = {**params, "cursor": httpx.URL(page["next"]).params.get("cursor")}

    def revert_compaction(
        self, conversation: str, compaction: str, *, context: str = "main"
    ) -> CompactionAnswer:
        """Take back the context's newest applied compaction (``cmp_…``): the next render is what
        it was before it. A ``TimelineError`` (409) names the one that can be reverted otherwise."""
        path = self._path(conversation, context, f"compactions/{compaction}/revert/")
        return self.transport.call(CompactionAnswer, "POST", path)

    def read(
        self, conversation: str, path: str, *, include_hidden: bool = True, context: str = "main"
    ) -> ReadAnswer:
        """Blocks at ``path`` (hidden and compacted ones too): the seeds' ``react.read``."""
        params = {"path": path, "include_hidden": "1" if include_hidden else "0"}
        return self.transport.call(
            ReadAnswer, "GET", self._path(conversation, context, "blocks/"), params=params
        )

    def hide(
        self, conversation: str, path: str, replacement_text: str, *, context: str = "main"
    ) -> list[BlockAnswer]:
        body = {"path": path, "replacement_text": replacement_text}
        return self.transport.call(
            BlocksAnswer, "POST", self._path(conversation, context, "hide/"), json=body
        )["blocks"]

    def unhide(self, conversation: str, path: str, *, context: str = "main") -> list[BlockAnswer]:
        """Show the hidden blocks at ``path`` again from the next render on (undoes :meth:`hide` and
        TTL pruning); answers the blocks at the path."""
        url = self._path(conversation, context, "unhide/")
        return self.transport.call(BlocksAnswer, "POST", url, json={"path": path})["blocks"]

    def search(self, conversation: str, query: str, *, context: str = "main") -> list[SearchHit]:
        path = self._path(conversation, context, "search/")
        return self.transport.call(SearchAnswer, "GET", path, params={"q": query})["results"]

    def sources(self, conversation: str, *, context: str = "main") -> list[SourceAnswer]:
        path = self._path(conversation, context, "sources/")
        return self.transport.call(SourcesAnswer, "GET", path)["sources_pool"]

    def add_sources(
        self, conversation: str, sources: list[dict[str, Any]], *, context: str = "main"
    ) -> list[SourceAnswer]:
        path = self._path(conversation, context, "sources/")
        return self.transport.call(SourcesAnswer, "POST", path, json={"sources": sources})["sources_pool"]

    def export(self, conversation: str, *, window: str = "all", context: str = "main") -> TimelineExport:
        path = self._path(conversation, context, "timeline/")
        return self.transport.call(TimelineExport, "GET", path, params={"window": window})

    def import_timeline(self, payload: Mapping[str, Any], *, id: str | None = None) -> ConversationAnswer:
        """Import an :meth:`export` (``TimelineExport``) as a new conversation (``id``: its id)."""
        body = {**payload, **({"id": id} if id else {})}
        return self.transport.call(ConversationAnswer, "POST", "/api/v1/conversations/import/", json=body)

    # -- the native agent loop

    def record_reply(
        self,
        conversation: str,
        response: Any,
        *,
        render: RenderAnswer | NativeRequest | str | None = None,
        context: str = "main",
        tools: Iterable[str] = (),
        model: str | None = None,
    ) -> ReplyAnswer:
        """Store the model's reply as it came: an Anthropic ``Message``, an OpenAI ``Response`` or
        ``ChatCompletion``, a google-genai ``GenerateContentResponse`` (the SDK object or its dict),
        or a :class:`ModelCall` of :meth:`retry_with_compaction` (its render then comes with it).

        Its thinking, notes or completion and tool calls become blocks of the current turn (tool
        names mapped back to yours: give ``tools``, your declared names, when one may be
        shortened); with ``render`` (the render the call was made from, or its ``render_id``) the
        reply's usage becomes that render's usage report. Answers the stored blocks and
        ``tool_calls``, the calls to run (``tool_call_id``, ``name``, ``input``). Safe to repeat:
        the same reply stores nothing twice."""
        body = reply_body(response, render=render, tools=tools, model=model)
        path = self._path(conversation, context, "replies/")
        return self.transport.call(ReplyAnswer, "POST", path, json=body)

    def record_tool_results(
        self,
        conversation: str,
        results: Mapping[str, Any],
        *,
        errors: Iterable[str] | Mapping[str, Any] = (),
        images: Mapping[str, Iterable[tuple[str, bytes]]] | None = None,
        context: str = "main",
    ) -> list[BlockAnswer]:
        """Store tool results by call id, each in the turn of its call: ``{call_id: output}``,
        an output text or any JSON value. ``errors``: the call ids whose output is an error, or
        ``{call_id: error output}`` (merged into ``results``); ``images``: ``{call_id: [(mime,
        bytes), …]}``. An unknown call id is refused (400 naming it); repeating is safe."""
        body = tool_results_body(results, errors=errors, images=images)
        path = self._path(conversation, context, "tool-results/")
        return self.transport.call(BlocksAnswer, "POST", path, json=body)["blocks"]

    # -- the seed's retry loop

    def retry_with_compaction(
        self,
        conversation: str,
        call: Callable[[RenderAnswer | NativeRequest], T],
        *,
        context: str = "main",
        report_usage: bool = False,
        **render_options: Any,
    ) -> ModelCall[T]:
        """Render, call the model; on a context-limit error render again with ``force_sanitize`` and
        retry once (seed 000 "Retry with Compaction"). Other errors propagate unchanged.

        Answers a :class:`ModelCall`: the reply with the render it was made from (``reply, render =
        …``; it also stands in for the reply, as this method's answer did before). With
        ``report_usage`` the reply's usage is reported on that render (``usage_report``); or pass the
        answer to :meth:`record_reply`, which stores the reply and reports its usage in one call."""
        rendered = self.render(conversation, context=context, **render_options)
        try:
            answer = ModelCall(call(rendered), rendered)
        except Exception as exc:
            if not is_context_limit_error(exc):
                raise
        else:
            return self._reported(answer, report_usage, conversation, context)
        rendered = self.render(conversation, context=context, **{**render_options, "force_sanitize": True})
        return self._reported(ModelCall(call(rendered), rendered), report_usage, conversation, context)

    def _reported(self, answer: ModelCall[T], report: bool, conversation: str, context: str) -> ModelCall[T]:
        if report:
            answer.usage_report = self.report_usage(
                answer.render, answer.reply, conversation=conversation, context=context
            )
        return answer
