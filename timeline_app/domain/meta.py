"""How big a stored ``meta`` object may be (issue 20.4): bytes of its canonical JSON, object keys
counted at every level, nesting depth.

A block's (or source's) ``meta`` is stored as given and read back whole by every export, so without
a cap a single block could hold the whole 64 MB body (a 40 MB, 2-million-key ``meta`` took an
exporting worker to 1.5 GB). The walk is iterative and stops at the first limit passed, so checking
an oversized value costs no more than reading it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MESSAGE_KEY = "openai_message"
"""A stored OpenAI message (``meta.openai_message``): its text and attachments have their own
limits, so its bytes are not counted (its keys and depth are)."""


@dataclass(frozen=True)
class MetaLimits:
    max_bytes: int
    max_keys: int
    max_depth: int


def _scalar_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def meta_problem(meta: dict[str, Any], limits: MetaLimits) -> str | None:
    """The first limit ``meta`` goes over, as a sentence; None when it is within all three.

    Bytes are those of its canonical JSON (sorted keys, no spaces, UTF-8, as ``stable_json`` without
    the spaces), ``meta.openai_message`` left out; keys are the object keys at every level (the
    message's included); depth counts ``meta`` itself as 1.
    """
    size = 0
    keys = 0
    stack: list[tuple[Any, int, bool]] = [(meta, 1, True)]
    while stack:
        value, depth, counted = stack.pop()
        if isinstance(value, dict | list):
            if depth > limits.max_depth:
                return f"nested deeper than {limits.max_depth} levels"
            members = len(value)
            if counted:
                size += 2 + max(members - 1, 0)  # brackets and commas
            if isinstance(value, dict):
                keys += members
                if keys > limits.max_keys:
                    return f"more than {limits.max_keys} keys (counted at every level)"
                for key, child in value.items():
                    if counted:
                        size += _scalar_bytes(str(key)) + 1  # the key and its colon
                    top_message = depth == 1 and key == MESSAGE_KEY
                    stack.append((child, depth + 1, counted and not top_message))
            else:
                stack.extend((child, depth + 1, counted) for child in value)
        elif counted:
            if isinstance(value, str) and len(value) > limits.max_bytes:
                return f"more than {limits.max_bytes} bytes of JSON"  # every character is a byte at least
            size += _scalar_bytes(value)
        if size > limits.max_bytes:
            return f"more than {limits.max_bytes} bytes of JSON"
    return None
