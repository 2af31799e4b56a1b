"""A LangChain v1 agent whose memory is the timeline service (extra ``langchain``).

::

    from langchain.agents import create_agent
    from timeline_client import TimelineClient
    from timeline_client.langchain import TimelineMiddleware

    agent = create_agent(model, tools, middleware=[TimelineMiddleware(TimelineClient(url, key), "support-42")])

The middleware stores every new message of a run in the conversation's named context (``main``
unless ``context=`` says otherwise) as OpenAI chat messages, each under its LangChain message id
(so a retried step or a resumed run never stores one twice): the human input, every AI message
with its tool calls, every tool result. Before each model call (``wrap_model_call``) it renders
that context in the model provider's native format (``ChatAnthropic`` → ``anthropic_messages``,
with its cache markers; ``ChatOpenAI`` → ``openai_responses`` when the model uses the Responses
API, else ``openai_chat``; any other model → ``openai_chat``; ``format=`` chooses), turns the
render back into LangChain messages (:func:`native_to_messages`) and hands the model those instead
of the raw state: history compacted by the service's worker, hidden or pruned tool output,
summaries, all as the service renders them, a tool call never apart from its result. After the
call it stores the model's answer and reports its usage against the render (``report_usage``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from timeline_client.contexts import Context
from timeline_client.http import TimelineAPIError
from timeline_client.native import NATIVE_FORMATS, NativeRequest
from timeline_client.timelines import TimelineClient
from timeline_client.tool_names import timeline_tool_name

__all__ = [
    "TimelineMiddleware",
    "format_for_model",
    "message_id_of",
    "native_to_messages",
    "to_openai_message",
]

log = logging.getLogger(__name__)

_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:\-]")
MAX_ID = 120


# -- storing: LangChain message → OpenAI chat message of the context


def message_id_of(message: BaseMessage, position: int) -> str:
    """The service ``message_id`` of a LangChain message: its own id (characters the service does
    not take become ``_``; a too long one is hashed); a message without an id gets a hash of
    its content and position in the run."""
    if message.id:
        text = _ID_CHARS.sub("_", str(message.id))
        if not text[:1].isalnum():
            text = "lc" + text
        if len(text) <= MAX_ID:
            return text
        return "lc-" + hashlib.sha256(str(message.id).encode()).hexdigest()[:40]
    digest = hashlib.sha256(f"{position}:{message.model_dump_json()}".encode()).hexdigest()
    return f"lc-{digest[:40]}"


def _part(block: Any) -> dict[str, Any]:
    """A LangChain content block as an OpenAI content part (text, image_url; others as JSON text)."""
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if isinstance(block, Mapping):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            return {"type": "text", "text": block["text"]}
        if block.get("type") == "image_url" and isinstance(block.get("image_url"), Mapping):
            return {"type": "image_url", "image_url": dict(block["image_url"])}
    return {"type": "text", "text": json.dumps(block, ensure_ascii=False, default=str)}


def _tool_text(block: Any) -> str:
    part = _part(block)
    return str(part["text"]) if part["type"] == "text" else json.dumps(part, ensure_ascii=False)


def _text_of(content: Any) -> str:
    """The text parts of a content, joined (tool calls, thinking and other blocks left out)."""
    if isinstance(content, str):
        return content
    texts = []
    for block in content or []:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    return "".join(texts)


def to_openai_message(message: BaseMessage) -> dict[str, Any] | None:
    """The OpenAI chat message that stores a LangChain message (None for kinds not stored)."""
    if isinstance(message, HumanMessage):
        content = message.content
        return {
            "role": "user",
            "content": content if isinstance(content, str) else [_part(b) for b in content],
        }
    if isinstance(message, AIMessage):
        stored: dict[str, Any] = {"role": "assistant", "content": _text_of(message.content)}
        if message.tool_calls:
            stored["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": json.dumps(call["args"], ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ]
            if not stored["content"]:
                stored["content"] = None
        return stored
    if isinstance(message, ToolMessage):
        content = message.content
        # a tool message's content is text (the service stores tool output as text): other blocks as JSON
        text = content if isinstance(content, str) else "".join(_tool_text(b) for b in content)
        if message.status == "error":
            text = f"[error] {text}"
        tool: dict[str, Any] = {"role": "tool", "content": text, "tool_call_id": message.tool_call_id}
        if message.name:
            tool["name"] = message.name
        return tool
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": _text_of(message.content)}
    return None


# -- the model's input: a native render → LangChain messages


def format_for_model(model: Any) -> str:
    """The native format of a chat model's provider: ``ChatAnthropic`` → ``anthropic_messages``;
    ``ChatOpenAI`` (and Azure's) → ``openai_responses`` when it uses the Responses API, else
    ``openai_chat``; anything else → ``openai_chat``. Told by class (no provider package needed)."""
    names = {(cls.__module__.split(".")[0], cls.__name__) for cls in type(model).__mro__}
    if any(module == "langchain_anthropic" for module, _ in names):
        return "anthropic_messages"
    if any(module == "langchain_openai" for module, _ in names):
        uses = getattr(model, "_use_responses_api", None)
        try:
            responses = bool(uses({})) if callable(uses) else bool(getattr(model, "use_responses_api", False))
        except Exception:  # a provider's private check changed: the safe default
            responses = False
        return "openai_responses" if responses else "openai_chat"
    return "openai_chat"


def _tool_name(name: str, declared: Sequence[str]) -> str:
    return timeline_tool_name(name, declared=list(declared))


def _args(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        parsed = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return {"__arguments__": arguments}
    return parsed if isinstance(parsed, dict) else {"__arguments__": parsed}


def _marked(content: Any, marker: Mapping[str, Any]) -> list[Any]:
    """``content`` as a list whose last block carries ``marker`` (``cache_control``)."""
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
    )
    if not blocks:
        blocks = [{"type": "text", "text": ""}]
    blocks[-1] = {**blocks[-1], "cache_control": dict(marker)}
    return blocks


def _from_anthropic(request: Mapping[str, Any], declared: Sequence[str]) -> tuple[Any, list[BaseMessage]]:
    """``system`` blocks and the messages of an ``anthropic_messages`` render. Tool results become
    ``ToolMessage``s (ChatAnthropic merges them back into the user message, first, in order);
    a ``cache_control`` on a ``tool_result`` rides on its content (ChatAnthropic hoists it back).
    ChatAnthropic rebuilds every ``tool_use`` from the AI message's ``tool_calls`` without
    ``cache_control``, so a marker there moves to the first block of the next user message (the
    call's result): the same prefix plus that result."""
    messages: list[BaseMessage] = []
    carried: Any = None
    for message in request.get("messages", []):
        content: Any = message.get("content")
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        )
        if message.get("role") == "assistant":
            calls, kept = [], []
            for block in blocks:
                if block.get("type") == "tool_use":
                    name = _tool_name(block["name"], declared)
                    calls.append({"id": block["id"], "name": name, "args": dict(block.get("input") or {})})
                    if "cache_control" in block:
                        carried = block["cache_control"]
                    kept.append({k: v for k, v in block.items() if k != "cache_control"} | {"name": name})
                else:
                    kept.append(block)
            if isinstance(content, str) and not calls:
                messages.append(AIMessage(content=content))
            else:
                messages.append(AIMessage(content=kept, tool_calls=calls))
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        others = [b for b in blocks if b.get("type") != "tool_result"]
        for index, block in enumerate(results):
            result: Any = block.get("content", "")
            marker = block.get("cache_control") or (carried if index == 0 else None)
            if marker:
                result = _marked(result, marker)
            status = "error" if block.get("is_error") else "success"
            messages.append(ToolMessage(content=result, tool_call_id=block["tool_use_id"], status=status))
        if others:
            if carried and not results and "cache_control" not in others[0]:
                others[0] = {**others[0], "cache_control": carried}
                content = others
            messages.append(HumanMessage(content=content if isinstance(content, str) else others))
        carried = None
    return request.get("system"), messages


def _from_chat(request: Mapping[str, Any], declared: Sequence[str]) -> tuple[Any, list[BaseMessage]]:
    """System text and the messages of an ``openai_chat`` render."""
    system: Any = None
    messages: list[BaseMessage] = []
    for index, message in enumerate(request.get("messages", [])):
        role, content = message.get("role"), message.get("content")
        if role == "system":
            if index == 0 and system is None:
                system = content
            else:
                messages.append(SystemMessage(content=content))
        elif role == "user":
            messages.append(HumanMessage(content=content))
        elif role == "assistant":
            calls = [
                {
                    "id": call["id"],
                    "name": _tool_name(call["function"]["name"], declared),
                    "args": _args(call["function"].get("arguments")),
                }
                for call in message.get("tool_calls") or []
            ]
            messages.append(AIMessage(content=content or "", tool_calls=calls))
        elif role == "tool":
            messages.append(ToolMessage(content=content, tool_call_id=message["tool_call_id"]))
    return system, messages


def _input_parts(content: Any) -> Any:
    """Responses input parts as LangChain content blocks (``input_text`` → ``text``)."""
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": part["text"]} if part.get("type") in ("input_text", "output_text") else part
        for part in content
    ]


def _from_responses(request: Mapping[str, Any], declared: Sequence[str]) -> tuple[Any, list[BaseMessage]]:
    """Instructions and the messages of an ``openai_responses`` render: an assistant text and the
    function calls after it are one ``AIMessage``; each output a ``ToolMessage``."""
    messages: list[BaseMessage] = []
    for item in request.get("input", []):
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {
                "id": item["call_id"],
                "name": _tool_name(item["name"], declared),
                "args": _args(item.get("arguments")),
            }
            last = messages[-1] if messages else None
            if isinstance(last, AIMessage):
                messages[-1] = AIMessage(content=last.content, tool_calls=[*last.tool_calls, call])
            else:
                messages.append(AIMessage(content="", tool_calls=[call]))
        elif kind == "function_call_output":
            output = item.get("output", "")
            messages.append(ToolMessage(content=_input_parts(output), tool_call_id=item["call_id"]))
        elif kind == "message":
            role, content = item.get("role"), _input_parts(item.get("content", ""))
            if role == "assistant":
                messages.append(AIMessage(content=content))
            elif role in ("system", "developer"):
                messages.append(SystemMessage(content=content))
            else:
                messages.append(HumanMessage(content=content))
        # reasoning items: LangChain has no input form for another run's reasoning
    return request.get("instructions"), messages


def native_to_messages(
    format: str, request: Mapping[str, Any], *, tool_names: Sequence[str] = ()
) -> tuple[SystemMessage | None, list[BaseMessage]]:
    """A native render's ``request`` as ``(system message or None, LangChain messages)``: every
    tool call an ``AIMessage.tool_calls`` entry (its name mapped back to the declared
    ``tool_names``), every result a ``ToolMessage`` right after it, cache markers kept."""
    if format == "anthropic_messages":
        system, messages = _from_anthropic(request, tool_names)
    elif format == "openai_responses":
        system, messages = _from_responses(request, tool_names)
    elif format == "openai_chat":
        system, messages = _from_chat(request, tool_names)
    else:
        raise ValueError(f"not a native format: {format!r} (one of {', '.join(NATIVE_FORMATS)})")
    return (SystemMessage(content=system) if system else None), messages


# -- usage


def _usage_body(format: str, message: AIMessage) -> dict[str, Any] | None:
    """LangChain's ``usage_metadata`` in the shape the provider's SDK reports (what
    ``POST …/renders/{id}/usage/`` reads)."""
    usage = message.usage_metadata
    if not usage:
        return None
    total_in, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    details = usage.get("input_token_details") or {}
    read, write = int(details.get("cache_read", 0) or 0), int(details.get("cache_creation", 0) or 0)
    if format == "anthropic_messages":
        return {
            "input_tokens": max(total_in - read - write, 0),
            "output_tokens": out,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }
    if format == "openai_responses":
        return {
            "input_tokens": total_in,
            "output_tokens": out,
            "total_tokens": total_in + out,
            "input_tokens_details": {"cached_tokens": read},
        }
    return {
        "prompt_tokens": total_in,
        "completion_tokens": out,
        "total_tokens": total_in + out,
        "prompt_tokens_details": {"cached_tokens": read},
    }


def _model_name(message: AIMessage, model: Any) -> str:
    metadata = message.response_metadata or {}
    for value in (metadata.get("model_name"), metadata.get("model"), getattr(model, "model_name", None)):
        if isinstance(value, str) and value:
            return value
    value = getattr(model, "model", None)
    return value if isinstance(value, str) else ""


def _answers(result: Any) -> list[BaseMessage]:
    """The messages a model call produced (``ModelResponse``, ``AIMessage`` or an extended one)."""
    if isinstance(result, AIMessage):
        return [result]
    inner = getattr(result, "model_response", None)
    if inner is not None:
        result = inner
    return list(getattr(result, "result", []) or [])


class TimelineMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """Stores a ``create_agent`` run in a named context and hands the model the service's render.

    ``format``: the native format to render (default: told from the model, :func:`format_for_model`).
    ``settings``: the conversation's settings when this middleware creates it. ``render_options``:
    extra options of every render (``max_tokens``, ``include_sources``, …).
    """

    def __init__(
        self,
        client: TimelineClient,
        conversation_id: str,
        context: str = "main",
        format: str | None = None,
        *,
        settings: Mapping[str, Any] | None = None,
        render_options: Mapping[str, Any] | None = None,
    ):
        super().__init__()
        if format is not None and format not in NATIVE_FORMATS:
            raise ValueError(f"format must be one of {', '.join(NATIVE_FORMATS)}, not {format!r}")
        self.client = client
        self.conversation_id = conversation_id
        self.context = Context(client, conversation_id, context)
        self.format = format
        self.settings = dict(settings) if settings else None
        self.render_options = dict(render_options or {})
        self._stored: set[str] = set()  # message ids this middleware knows the service holds
        self._conversation_ready = False
        self.last_render: NativeRequest | None = None  # the latest render (SDK kwargs; ``.render``: all)
        self.last_render_id: str | None = None
        self.last_usage_report: Any = None

    @property
    def name(self) -> str:
        return f"TimelineMiddleware[{self.conversation_id}/{self.context.name}]"

    # -- storing

    def _ensure_conversation(self) -> None:
        if self._conversation_ready:
            return
        try:
            self.client.create_conversation(id=self.conversation_id, settings=self.settings)
        except TimelineAPIError as exc:
            if exc.status != 409:  # 409: it exists already
                raise
        self._conversation_ready = True

    def store(self, messages: Sequence[BaseMessage]) -> int:
        """Store the messages not stored yet (by message id); how many were sent."""
        batch: list[dict[str, Any]] = []
        ids: list[str] = []
        for position, message in enumerate(messages):
            message_id = message_id_of(message, position)
            if message_id in self._stored or message_id in ids:
                continue
            stored = to_openai_message(message)
            if stored is None:
                continue
            batch.append({**stored, "message_id": message_id})
            ids.append(message_id)
        if batch:
            self._ensure_conversation()
            self.context.extend(batch)
            self._stored.update(ids)
        return len(batch)

    # -- the model call

    def _prepare(self, request: ModelRequest) -> tuple[ModelRequest, str]:
        """Store the run's new messages, render, and the request with the render in it."""
        self.store(list(request.state.get("messages", [])))
        self._ensure_conversation()
        format = self.format or format_for_model(request.model)
        options: dict[str, Any] = dict(self.render_options)
        system_text = request.system_message.text if request.system_message is not None else ""
        if system_text:
            options["system"] = system_text
        rendered = self.context.render(format=format, **options)
        assert isinstance(rendered, NativeRequest)
        self.last_render = rendered
        self.last_render_id = rendered.render.get("render_id")
        declared = [t.name if hasattr(t, "name") else str(t.get("name", "")) for t in request.tools]
        system, messages = native_to_messages(format, rendered, tool_names=declared)
        if system is None and request.system_message is not None and format != "anthropic_messages":
            system = request.system_message
        return request.override(messages=messages, system_message=system), format

    def _finish(self, request: ModelRequest, format: str, result: Any) -> None:
        answers = _answers(result)
        self.store(answers)
        ai = next((m for m in answers if isinstance(m, AIMessage)), None)
        if ai is None or self.last_render_id is None:
            return
        body = _usage_body(format, ai)
        model = _model_name(ai, request.model)
        if body is None or not model:
            log.info(
                "no usage or model name on the model's answer: nothing reported for render %s",
                self.last_render_id,
            )
            return
        self.last_usage_report = self.client.report_usage(
            self.last_render_id,
            body,
            model=model,
            conversation=self.conversation_id,
            context=self.context.name,
        )

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        prepared, format = self._prepare(request)
        result = handler(prepared)
        self._finish(request, format, result)
        return result

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        prepared, format = await asyncio.to_thread(self._prepare, request)
        result = await handler(prepared)
        await asyncio.to_thread(self._finish, request, format, result)
        return result

    # -- the end of a run: what came after the last model call (a tool that ends the run)

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.store(list(state.get("messages", [])))
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        await asyncio.to_thread(self.store, list(state.get("messages", [])))
        return None
