"""``timeline-mcp``: an MCP server exposing one context of the timeline service to an agent.

It talks to the service over its HTTP API with :class:`TimelineClient` (no Django import), so it
runs anywhere the ``mcp`` extra is installed (``pip install 'timeline-service[mcp]'``)::

    timeline-mcp --url http://127.0.0.1:8000 --key tlk_… --conversation support-42 [--context main]

Flags fall back to ``TIMELINE_API_URL``, ``TIMELINE_API_KEY``, ``TIMELINE_CONVERSATION`` and
``TIMELINE_CONTEXT`` (default ``main``). The server speaks stdio by default; ``--transport
streamable-http`` serves MCP's Streamable HTTP on ``--host``/``--port`` instead.

Every tool is scoped to the one conversation and context given at start. A service error (a bad
path, an unknown conversation, a 4xx) comes back as an MCP tool error carrying the service's
message; the server keeps running.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from timeline_client.http import TimelineAPIError, TimelineUnavailable
from timeline_client.native import NativeRequest
from timeline_client.timelines import TimelineClient
from timeline_client.types import BlockAnswer, SourceAnswer

T = TypeVar("T")

SERVER_INSTRUCTIONS = """\
This server gives you the durable memory of one conversation ("{conversation}", context \
"{context}") kept by the timeline service. Your visible context may have been compacted \
(old turns replaced by a summary) or pruned (old tool output hidden behind a short replacement \
text). Nothing is ever lost: every block keeps its path (shown as "[path: …]" lines), and \
timeline_read gives the full original back. Use timeline_search to find where something was \
said when you do not know its path."""

READ_DESCRIPTION = """\
Read blocks of the conversation back in full by their path, including blocks that are hidden \
or were compacted into a summary.

Use it when your context shows a "[path: …]" line whose content you need but no longer see: a \
summary that mentions a tool result or attachment, a hidden block that shows only its \
replacement text, or a path that timeline_search found. Paths look like "tc:turn_3.tc_1.result" \
(a tool result), "ar:turn_2.user.prompt", "fi:turn_2.attachments/notes.txt" or "ar:msg.<id>" \
(a message of a named context); "so:sources_pool[3,5-6]" reads sources by sid. A path that \
does not exist is an error."""

SEARCH_DESCRIPTION = """\
Search this context's stored blocks over the whole history: blocks that were compacted into a \
summary and blocks that are hidden are searched too, and marked so. Every word of the query \
must occur in a block (case-insensitive, whole words; "quoted phrase" and -word work on \
PostgreSQL); the best matches come first, at most 50. Each hit gives the block's path and a \
snippet; call timeline_read with that path for the full text. Use it to recall a fact, number \
or name from earlier in the conversation that your current context no longer shows."""

HIDE_DESCRIPTION = """\
Hide the block(s) at a path from future renders of the context, replaced by replacement_text \
(keep it short and say what was there and its path, e.g. "[flight search results: read \
tc:turn_3.tc_1.result]"). Use it to free context space from bulky tool output you no longer \
need verbatim. The block stays stored: timeline_read(path) still returns it in full."""

UNHIDE_DESCRIPTION = """\
Undo a hide: the block(s) at a path show their full content again from the next render on, \
whether you hid them with timeline_hide or the service pruned them as stale tool output (a \
pruned block may be pruned again once the prompt cache goes cold). Use it when you need a hidden \
block back in your context for the following turns, not just read once (timeline_read does that)."""

SOURCES_DESCRIPTION = """\
List the conversation's sources pool: every source (web page, document) collected so far, each \
with its stable sid, url, title and text. Cite sources by sid; read a subset with \
timeline_read("so:sources_pool[1,3-4]")."""

RENDER_DESCRIPTION = """\
Render the context as the model sees it now: the latest summary (if compacted), then the \
visible blocks with their paths, hidden blocks as their replacement text. format "text" (the \
default) gives readable text with cache points marked =>[k]; "anthropic" gives the content \
parts of the user message, "openai" chat messages, each as JSON with token counts; \
"anthropic_messages", "openai_responses", "openai_chat" and "gemini_contents" the provider's own \
request body with native tool use (the SDK call's keyword arguments in "request", and "ending": \
whether a continue message was added after the model's last message). Rendering \
may compact the context when it is over its token threshold."""

RECORD_REPLY_DESCRIPTION = """\
Store a model's reply as its provider's API answered it, for an agent that runs its own model \
calls on a native render (timeline_render with "anthropic_messages", "openai_responses" or \
"openai_chat"): response is the reply's JSON (an Anthropic Message, an OpenAI Response or \
ChatCompletion, a Gemini GenerateContentResponse); render_id, when given, the render the call was \
made from (its usage is reported on it). Its thinking, text and tool calls become blocks of the \
current turn; the answer lists the tool calls to run (tool_call_id, name, input). Storing the same \
reply again stores nothing twice."""

RECORD_TOOL_RESULTS_DESCRIPTION = """\
Store the results of the tool calls a recorded reply asked for: results maps each tool_call_id to \
its output (text or any JSON value); errors lists the call ids whose output is an error. Each \
result lands in the turn of its call; an unknown call id is an error naming it."""

REVERT_DESCRIPTION = """\
Take back the context's newest compaction: from the next render on, the context is again exactly \
what it was before that compaction (the original turns instead of their summary). Use it when a \
summary lost something you need in full for the following turns. compaction_id: the compaction's \
cmp_… id; empty means the newest applied one. Only the newest applied compaction can be reverted."""

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _call(action: Callable[[], T]) -> T:
    """Run one service call; turn its failure into a ``ToolError`` with the service's message."""
    try:
        return action()
    except TimelineAPIError as exc:
        details = f" {json.dumps(exc.details, ensure_ascii=False)}" if exc.details else ""
        raise ToolError(f"{exc.message} (HTTP {exc.status} {exc.code}){details}") from exc
    except TimelineUnavailable as exc:
        raise ToolError(f"the timeline service could not be reached: {exc.reason}") from exc


def _block_text(block: BlockAnswer) -> str:
    """One block as a model reads it: a header line with its path and state, then its text."""
    state = []
    if block.get("hidden"):
        state.append(f"hidden, shown as {block.get('replacement_text', '')!r}")
    header = f"[path: {block.get('path') or '-'}] {block.get('type')} seq={block.get('seq')}"
    if block.get("turn_id"):
        header += f" turn={block['turn_id']}"
    if state:
        header += f" ({'; '.join(state)})"
    body = block.get("text") or ""
    if block.get("base64"):
        size = len(block["base64"]) * 3 // 4
        body = (body + "\n" if body else "") + f"[binary {block.get('mime')}, about {size} bytes]"
    return f"{header}\n{body}"


def _sources_text(sources: Sequence[SourceAnswer]) -> str:
    if not sources:
        return "The sources pool is empty."
    return json.dumps(list(sources), ensure_ascii=False, indent=1)


def build_server(client: TimelineClient, conversation: str, context: str = "main") -> MCPServer:
    """The MCP server with the timeline tools, bound to one conversation and context."""
    server: MCPServer = MCPServer(
        name="timeline",
        instructions=SERVER_INSTRUCTIONS.format(conversation=conversation, context=context),
    )
    # In this order in the server's tool list.
    for add_tools in (_lookup_tools, _visibility_tools, _view_tools, _native_loop_tools):
        add_tools(server, client, conversation, context)
    return server


def _lookup_tools(server: MCPServer, client: TimelineClient, conversation: str, context: str) -> None:
    """Read a path back in full; search the whole history."""

    @server.tool(description=READ_DESCRIPTION, annotations=_READ_ONLY, structured_output=False)
    def timeline_read(path: str) -> str:
        answer = _call(lambda: client.read(conversation, path, include_hidden=True, context=context))
        if answer.get("sources_pool") is not None and not answer.get("blocks"):
            return _sources_text(answer["sources_pool"])
        blocks = answer.get("blocks") or []
        return "\n\n".join(_block_text(block) for block in blocks)

    @server.tool(description=SEARCH_DESCRIPTION, annotations=_READ_ONLY, structured_output=False)
    def timeline_search(query: str) -> str:
        hits = _call(lambda: client.search(conversation, query, context=context))
        if not hits:
            return f"No stored block matches {query!r}."
        lines = [f"{len(hits)} block(s) match {query!r} (read one in full with timeline_read):"]
        for hit in hits:
            marks = [m for m in ("compacted", "hidden") if hit.get(m)]
            note = f" [{', '.join(marks)}]" if marks else ""
            lines.append(
                f"- {hit.get('path') or '(no path)'} ({hit.get('type')}){note}: {hit.get('snippet')}"
            )
        return "\n".join(lines)


def _visibility_tools(server: MCPServer, client: TimelineClient, conversation: str, context: str) -> None:
    """Change what the next render shows: hide, unhide, revert a compaction."""

    @server.tool(
        description=HIDE_DESCRIPTION,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        structured_output=False,
    )
    def timeline_hide(path: str, replacement_text: str) -> str:
        blocks = _call(lambda: client.hide(conversation, path, replacement_text, context=context))
        return (
            f"Hid {len(blocks)} block(s) at {path}; renders now show {replacement_text!r} instead. "
            f"timeline_read({path!r}) still returns the full text."
        )

    @server.tool(
        description=UNHIDE_DESCRIPTION,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        structured_output=False,
    )
    def timeline_unhide(path: str) -> str:
        blocks = _call(lambda: client.unhide(conversation, path, context=context))
        hidden = sum(1 for block in blocks if block.get("hidden"))
        note = f" ({hidden} popped message block(s) stay out of the context)" if hidden else ""
        return f"{len(blocks) - hidden} block(s) at {path} render in full from the next render on{note}."

    @server.tool(
        description=REVERT_DESCRIPTION,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        structured_output=False,
    )
    def timeline_revert_compaction(compaction_id: str = "") -> str:
        wanted = compaction_id or _call(
            lambda: client.newest_applied_compaction(conversation, context=context)
        )
        if not wanted:
            return "This context has no applied compaction to revert."
        row = _call(lambda: client.revert_compaction(conversation, wanted, context=context))
        turns = ", ".join(row["covered_turn_ids"]) or "none"
        return (
            f"Reverted {row['id']}: from the next render on the context shows the turns it had "
            f"summarized ({turns}) in full again, about {row['before_tokens']:,} tokens."
        )


def _view_tools(server: MCPServer, client: TimelineClient, conversation: str, context: str) -> None:
    """The sources pool; the context rendered as the model sees it."""

    @server.tool(description=SOURCES_DESCRIPTION, annotations=_READ_ONLY, structured_output=False)
    def timeline_sources() -> str:
        return _sources_text(_call(lambda: client.sources(conversation, context=context)))

    @server.tool(
        description=RENDER_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
        structured_output=False,
    )
    def timeline_render(
        format: Literal[
            "text",
            "anthropic",
            "openai",
            "anthropic_messages",
            "openai_responses",
            "openai_chat",
            "gemini_contents",
        ] = "text",
    ) -> str:
        debug = {"debug": True} if format == "text" else {}
        rendered = _call(lambda: client.render(conversation, context=context, format=format, **debug))
        if format == "text":
            return str(rendered.get("debug", ""))
        if isinstance(rendered, NativeRequest):
            answer = rendered.render
            native = {
                "request": dict(rendered),
                "ending": answer.get("ending"),
                "tokens": answer["tokens"],
                "compaction": answer["compaction"],
            }
            return json.dumps(native, ensure_ascii=False, indent=1)
        shown = {key: rendered.get(key) for key in ("blocks", "cache_points", "tokens", "compaction")}
        return json.dumps(shown, ensure_ascii=False, indent=1)


def _native_loop_tools(server: MCPServer, client: TimelineClient, conversation: str, context: str) -> None:
    """For an agent that runs its own model calls on a native render: store the reply and the
    results of the tool calls it asked for."""

    @server.tool(
        description=RECORD_REPLY_DESCRIPTION,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        structured_output=False,
    )
    def timeline_record_reply(response: dict[str, Any], render_id: str = "") -> str:
        answer = _call(
            lambda: client.record_reply(conversation, response, render=render_id or None, context=context)
        )
        stored = [f"{block.get('type')} {block.get('path') or ''}".strip() for block in answer["blocks"]]
        body = {
            "stored": stored,
            "tool_calls": answer["tool_calls"],
            "usage_reported": answer["usage"] is not None,
        }
        return json.dumps(body, ensure_ascii=False, indent=1)

    @server.tool(
        description=RECORD_TOOL_RESULTS_DESCRIPTION,
        annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        structured_output=False,
    )
    def timeline_record_tool_results(results: dict[str, Any], errors: list[str] | None = None) -> str:
        blocks = _call(
            lambda: client.record_tool_results(conversation, results, errors=errors or (), context=context)
        )
        return f"Stored {len(blocks)} result block(s): " + ", ".join(str(b.get("path")) for b in blocks)


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="timeline-mcp",
        description="MCP server for one conversation context of the timeline service.",
    )
    parser.add_argument("--url", default=env("TIMELINE_API_URL"), help="service URL (TIMELINE_API_URL)")
    parser.add_argument("--key", default=env("TIMELINE_API_KEY"), help="API key (TIMELINE_API_KEY)")
    parser.add_argument(
        "--conversation", default=env("TIMELINE_CONVERSATION"), help="conversation id (TIMELINE_CONVERSATION)"
    )
    parser.add_argument(
        "--context",
        default=env("TIMELINE_CONTEXT") or "main",
        help="named context (TIMELINE_CONTEXT, default main)",
    )
    parser.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable-http only")
    parser.add_argument("--port", type=int, default=8765, help="streamable-http only")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    missing = [
        flag
        for flag, value in (("--url", args.url), ("--key", args.key), ("--conversation", args.conversation))
        if not value
    ]
    if missing:
        parser.error(f"missing {', '.join(missing)} (or the TIMELINE_* environment variables)")
    client = TimelineClient(args.url, args.key)
    server = build_server(client, args.conversation, args.context)
    try:
        if args.transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=args.host, port=args.port)
    finally:
        client.close()


if __name__ == "__main__":  # pragma: no cover - `python -m timeline_client.mcp_server`
    main()
