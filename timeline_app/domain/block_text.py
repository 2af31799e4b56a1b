"""The rendered text of one block (seed 000 "Visible Timeline") and the core's one JSON serialisation.

Pure. ``rendering.formats`` builds the output formats on these; ``costs`` prices a block by them.
"""

from __future__ import annotations

import json
from typing import Any

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    PLAN,
    PLAN_ACK,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)

# ``meta`` flag of the turn header a render produces for a window that starts mid-turn.
CONTINUED_META = "continued"


def stable_json(value: Any) -> str:
    """The one JSON serialisation of the core: sorted keys, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# Block text
# --------------------------------------------------------------------------------------------


def path_lines(block: Block) -> list[str]:
    return [f"[path: {block.path}]"] if block.path else []


def attachment_name(block: Block) -> str:
    name = block.meta.get("name")
    if isinstance(name, str) and name:
        return name
    tail = block.path.rsplit("/", 1)[-1] if block.path else ""
    return tail.split(":", 1)[-1] if tail else ""


def _header_line(block: Block) -> str:
    kind = block.type
    if kind == TURN_HEADER:
        continued = " (continued)" if block.meta.get(CONTINUED_META) is True else ""
        return f"[TURN {block.turn_id}] ts={block.ts}{continued}"
    if kind == USER_PROMPT:
        return "[USER MESSAGE]"
    if kind == USER_ATTACHMENT:
        return f"[USER ATTACHMENT] {attachment_name(block)} | {block.mime}"
    if kind in (NOTES, ASSISTANT_COMPLETION):
        return "[AI Agent say]:"
    if kind == TOOL_CALL:
        return "[react.tool.call] (JSON)"
    if kind == TOOL_RESULT:
        kind_label = "JSON status" if block.mime == "application/json" else "artifact block"
        return f"[react.tool.result] ({kind_label})"
    if kind == SUMMARY:
        covered = block.meta.get("covered_turn_ids") or []
        covered_text = ",".join(str(t) for t in covered) if isinstance(covered, list) else str(covered)
        line = f"[CONVERSATION SUMMARY] covered_turns={covered_text}"
        split = block.meta.get("split_turn_id")
        if split:
            line += f" split_turn={split}"
        return line
    if kind == PLAN:
        return "[react.plan] (JSON)"
    if kind == PLAN_ACK:
        return "[react.plan.ack]"
    return f"[{kind}] author={block.author}" if block.author else f"[{kind}]"


def block_text(block: Block) -> str:
    """The rendered text part of one block (the binary payload, if any, is a separate part).

    Layout: a header line, then ``[path: …]`` when the block has a path, then type-specific
    lines, then the block's text. A hidden block renders ``[<type>] (hidden)``, its path and
    its replacement text, and never its binary payload.
    """
    if block.hidden:
        replacement = [block.replacement_text] if block.replacement_text else []
        return "\n".join([f"[{block.type}] (hidden)", *path_lines(block), *replacement])
    if block.type == TURN_HEADER:
        # The header line is the whole block; a stored text (rare) follows it.
        return "\n".join([_header_line(block), *([block.text] if block.text else [])])
    lines: list[str] = [_header_line(block)]
    if block.type == USER_ATTACHMENT:
        summary = block.meta.get("summary")
        if summary:
            lines.append(f"summary: {summary}")
        lines.extend(path_lines(block))
        physical = block.meta.get("physical_path")
        if physical:
            lines.append(f"[physical_path: {physical}]")
    else:
        lines.extend(path_lines(block))
    if block.text:
        lines.append(block.text)
    return "\n".join(lines)


def binary_placeholder(block: Block) -> str:
    """The plain-text stand-in for a binary payload."""
    tag = "image" if block.mime.startswith("image/") else "document"
    return f"<{tag} media_type={block.mime} b64_len={len(block.data)}>"
