"""What every stored block must carry, on every write path (blocks API, replies, tool results,
named-context messages, import). Pure.

* **Author.** Every type has one documented default author, applied when a block comes without
  one (blank counts as none) and shown in the answer, since it is stored: the well-known types
  their own (:data:`DEFAULT_AUTHORS`), any other type ``user`` (:data:`OTHER_AUTHOR`), the side
  the native formats render a block of an unknown type on unless its author says ``assistant``.
* **Tool call id.** A ``react.tool.call`` or ``react.tool.result`` carries its ``tool_call_id``
  (``meta.tool_call_id``, a stored ``tool`` message's ``tool_call_id``, or a ``tc_…`` id in its
  ``path``): without it a call would render with a made-up id and a made-up error result.
* **Known call.** A result that says it answers a call (the tool-results endpoint) must name a
  call stored in the timeline (``known_calls``).

The functions answer ``{field: message}`` (empty when nothing is wrong), so a write refuses the
whole request with one 400 naming every field before anything is stored; ``checked_blocks`` is
that front for the writes of new blocks (``services.blocks.blocks_store``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.message_validation import message_block_problems
from timeline_app.domain.thinking import thinking_block_problems
from timeline_app.errors import InvalidInput

DEFAULT_AUTHORS: dict[str, str] = {
    b.TURN_HEADER: "system",
    b.USER_PROMPT: "user",
    b.USER_ATTACHMENT: "user",
    b.USER_ATTACHMENT_META: "user",
    b.ASSISTANT_COMPLETION: "assistant",
    b.THINKING: "assistant",
    b.NOTES: "react",
    b.TOOL_CALL: "react",
    b.PLAN: "react",
    b.PLAN_ACK: "react",
    b.TOOL_RESULT: "tool",
    b.SUMMARY: "system",
    b.SOURCES_POOL: "system",
    b.ANNOUNCE: "system",
}
"""The author a block of a well-known type gets when it comes without one."""
OTHER_AUTHOR = "user"
"""The author a block of any other type gets when it comes without one."""

TOOL_TYPES = frozenset({b.TOOL_CALL, b.TOOL_RESULT})


def default_author(type: str, author: str) -> str:
    """``author`` when given (not blank), else the type's documented default."""
    return author if author.strip() else DEFAULT_AUTHORS.get(type, OTHER_AUTHOR)


def block_tool_call_id(meta: Any, path: str) -> str:
    """The tool call id a block carries: ``meta.tool_call_id``, a stored OpenAI ``tool`` message's
    ``tool_call_id`` (``meta.openai_message``), or the ``tc_…`` id in its path."""
    value = meta.get("tool_call_id") if isinstance(meta, dict) else None
    if isinstance(value, str) and value:
        return value
    message = meta.get("openai_message") if isinstance(meta, dict) else None
    value = message.get("tool_call_id") if isinstance(message, dict) else None
    if isinstance(value, str) and value:
        return value
    match = b.TOOL_CALL_ID_IN_PATH.search(path)
    return match.group(1) if match else ""


def block_problems(
    *,
    type: str,
    author: str,
    meta: Any,
    path: str = "",
    where: str = "",
    known_calls: Collection[str] | None = None,
) -> dict[str, str]:
    """What is wrong with one block (its author after :func:`default_author`, so never blank on the
    write paths, which apply the default first); ``where`` prefixes the field
    names (``blocks[3]``). ``known_calls``: the call ids a result must answer, when the request says
    its results answer calls (None: not checked)."""
    at = f"{where}." if where else ""
    problems: dict[str, str] = {}
    if not author.strip():
        problems[f"{at}author"] = (
            f"required: who said it (the default for {type}: {default_author(type, '')})"
        )
    if type in TOOL_TYPES:
        call_id = block_tool_call_id(meta, path)
        if not call_id:
            problems[f"{at}meta.tool_call_id"] = (
                f"required: the tool call id a {type} block belongs to (a non-empty string)"
            )
        elif type == b.TOOL_RESULT and known_calls is not None and call_id not in known_calls:
            problems[f"{at}meta.tool_call_id"] = f"no tool call {call_id} is stored in this context"
    return problems


def checked_blocks(blocks: Sequence[NewBlock]) -> list[NewBlock]:
    """The blocks of one write, checked before anything is read or stored, each with its default
    author when it came without one (``block_rules.default_author``).

    The first kind of problem found refuses the whole request (InvalidInput, a 400) naming every
    block and field of that kind: what a type needs (``block_rules.block_problems``), a block id
    twice in the request, a message block that is no valid OpenAI message
    (``message_validation``), a thinking block not in its provider's shape (``thinking``), and a
    summary block (compaction writes those)."""
    blocks = [
        nb if nb.author.strip() else replace(nb, author=default_author(nb.type, nb.author)) for nb in blocks
    ]
    _refuse(
        "a block lacks what its type needs",
        _each(
            blocks,
            lambda nb, at: block_problems(
                type=nb.type, author=nb.author, meta=nb.meta, path=nb.path, where=at
            ),
        ),
    )
    ids = [nb.client_id for nb in blocks if nb.client_id]
    if len(ids) != len(set(ids)):
        raise InvalidInput("the same block id appears twice in one request", details={"id": "duplicate"})
    _refuse(
        "a message block does not carry a valid OpenAI message",
        _each(blocks, lambda nb, at: message_block_problems(nb.type, nb.meta, where=f"{at}.meta")),
    )
    _refuse(
        "a thinking block does not have its provider's shape",
        _each(
            blocks,
            lambda nb, at: thinking_block_problems(
                type=nb.type,
                author=nb.author,
                text=nb.text,
                meta=nb.meta,
                has_data=bool(nb.data),
                where=f"{at}.meta",
            ),
        ),
    )
    for nb in blocks:
        if nb.type == b.SUMMARY:
            raise InvalidInput(
                "conv.range.summary blocks are written by compaction only", details={"type": nb.type}
            )
    return blocks


def _each(blocks: Sequence[NewBlock], check: Callable[[NewBlock, str], dict[str, str]]) -> dict[str, str]:
    problems: dict[str, str] = {}
    for i, nb in enumerate(blocks):
        problems.update(check(nb, f"blocks[{i}]"))
    return problems


def _refuse(message: str, problems: dict[str, str]) -> None:
    if problems:
        raise InvalidInput(message, details=problems)
