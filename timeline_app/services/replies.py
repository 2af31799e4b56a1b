"""The native agent loop's two writes: a provider's reply as it came, and the results of the
tool calls it made.

* :func:`reply_record` reads the reply (``rendering/native/replies.py``, pure), stores its blocks in the
  current turn and, given the ``render_id`` it answered, its usage as that render's report, in one
  transaction: nothing is stored when any part is refused. Idempotent by the provider's response
  id: the same body again answers the stored blocks; another body under that id is a 409.
* :func:`tool_results_record` stores results by call id in the turn of their call (errors
  marked, text or JSON, images as extra result blocks); a call id the context does not know is a
  400 naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.block_rules import block_problems
from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.meta import meta_problem
from timeline_app.errors import InvalidInput
from timeline_app.models import Block, RenderUsage, Timeline
from timeline_app.rendering.native.replies import Reply, ReplyError, ToolCall, parse_reply
from timeline_app.services.blocks import Appended, blocks_store, meta_limits
from timeline_app.services.usage import render_usage_report


@dataclass(frozen=True)
class RecordedReply:
    reply: Reply
    rows: list[Block]
    created: int
    usage: RenderUsage | None

    @property
    def calls(self) -> list[ToolCall]:
        return self.reply.calls


def _same_reply(stored: Block, new: NewBlock) -> dict[str, str]:
    """A block stored under this reply's client id must come from the very same body."""
    old = stored.meta.get("reply") if isinstance(stored.meta, dict) else None
    if isinstance(old, dict) and old.get("digest") == new.meta["reply"]["digest"]:
        return {}
    return {"response.id": f"response {new.meta['reply']['response_id']} is stored with another body"}


def reply_record(
    *,
    timeline: Timeline,
    response: Mapping[str, Any],
    now: datetime,
    render_id: str | None = None,
    declared: Sequence[str] = (),
    model: str | None = None,
) -> RecordedReply:
    """Store a reply's parts as blocks and (with ``render_id``) its usage as the render's report."""
    try:
        reply = parse_reply(response, declared=declared)
    except ReplyError as exc:
        raise InvalidInput(str(exc), details={exc.field: str(exc)}) from exc
    limits = meta_limits()
    problems = {
        f"blocks[{k}].meta": problem
        for k, nb in enumerate(reply.blocks)
        if (problem := meta_problem(nb.meta, limits))
    }
    problems.update(
        {
            f"blocks[{k}].text": f"text over the limit of {settings.TIMELINE_MAX_BLOCK_TEXT_CHARS} characters"
            for k, nb in enumerate(reply.blocks)
            if len(nb.text) > settings.TIMELINE_MAX_BLOCK_TEXT_CHARS
        }
    )
    if problems:
        raise InvalidInput("a part of the reply is too large to store", details=problems)
    with transaction.atomic(savepoint=False):
        appended = blocks_store(timeline=timeline, blocks=reply.blocks, replay_check=_same_reply)
        usage = None
        if render_id is not None:
            usage = _report(timeline=timeline, reply=reply, render_id=render_id, model=model, now=now)
    return RecordedReply(reply=reply, rows=appended.rows, created=appended.created, usage=usage)


def _report(
    *, timeline: Timeline, reply: Reply, render_id: str, model: str | None, now: datetime
) -> RenderUsage:
    if reply.usage is None:
        raise InvalidInput(
            "the reply carries no usage to report on the render", details={"response.usage": "required"}
        )
    body = {"usage": reply.usage, "model": model or reply.model}
    row, _ = render_usage_report(timeline=timeline, render_id=render_id, body=body, now=now, durable=False)
    return row


@dataclass(frozen=True)
class NewToolResult:
    tool_call_id: str
    output: Any
    is_error: bool = False
    images: list[tuple[str, bytes]] = field(default_factory=list)


def _result_text(output: Any) -> tuple[str, str]:
    if isinstance(output, str):
        return "text/plain", output
    return "application/json", json.dumps(output, ensure_ascii=False, sort_keys=True)


def _same_result(stored: Block, new: NewBlock) -> dict[str, str]:
    same = (
        stored.text == new.text
        and stored.mime == new.mime
        and bytes(stored.data or b"") == bytes(new.data or b"")
        and stored.meta == new.meta
    )
    return (
        {}
        if same
        else {"tool_call_id": f"a result for {new.meta['tool_call_id']} is stored with other content"}
    )


def tool_results_record(*, timeline: Timeline, results: Sequence[NewToolResult]) -> Appended:
    """Store each result in the turn of its call; the same results again answer the stored rows."""
    ids = [r.tool_call_id for r in results]
    problems: dict[str, str] = {}
    if len(ids) != len(set(ids)):
        problems["results"] = "one result per tool call id"
    calls = selectors.tool_calls_by_id(timeline=timeline, call_ids=set(ids))
    for i, result in enumerate(results):
        for key, message in block_problems(
            type=b.TOOL_RESULT,
            author="tool",
            meta={"tool_call_id": result.tool_call_id},
            known_calls=calls.keys(),
        ).items():
            problems[
                f"results[{i}].tool_call_id" if key == "meta.tool_call_id" else f"results[{i}].{key}"
            ] = message
        if len(_result_text(result.output)[1]) > settings.TIMELINE_MAX_BLOCK_TEXT_CHARS:
            problems[f"results[{i}].output"] = (
                f"text over the limit of {settings.TIMELINE_MAX_BLOCK_TEXT_CHARS} characters"
            )
    if problems:
        raise InvalidInput("a tool result cannot be stored", details=problems)
    new: list[NewBlock] = []
    for result in results:
        call = calls[result.tool_call_id]
        meta = {
            "tool_call_id": result.tool_call_id,
            "tool_id": call.meta.get("tool_id", ""),
            "status": "error" if result.is_error else "ok",
        }
        if result.is_error:
            meta["is_error"] = True
        mime, text = _result_text(result.output)
        key = f"tool-result:{call.seq}"
        new.append(
            NewBlock(
                type=b.TOOL_RESULT,
                author="tool",
                turn_id=call.turn_id,
                mime=mime,
                text=text,
                meta=meta,
                client_id=f"{key}:0",
            )
        )
        for k, (image_mime, data) in enumerate(result.images, start=1):
            new.append(
                NewBlock(
                    type=b.TOOL_RESULT,
                    author="tool",
                    turn_id=call.turn_id,
                    mime=image_mime,
                    data=data,
                    meta=dict(meta),
                    client_id=f"{key}:{k}",
                )
            )
    return blocks_store(timeline=timeline, blocks=new, replay_check=_same_result)
