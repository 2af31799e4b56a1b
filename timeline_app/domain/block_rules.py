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
whole request with one 400 naming every field before anything is stored.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from timeline_app.domain import blocks as b

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
