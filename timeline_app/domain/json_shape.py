"""How big the structure of a JSON text is, read before it is parsed (issue 30, defect 4).

``json.loads`` builds the whole value before anything can refuse it: a ``meta`` of 2,000,000 keys
(40 MB) cost a worker 11.8 s and 584 MB before the key cap answered 400. ``json_shape_problem``
reads only the structural tokens of the raw bytes (strings are skipped whole by one regex, in C)
and stops at the first cap passed, so refusing such a body costs about one pass over its start.
Pure: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A string (its escapes skipped whole) or one structural character; numbers, literals and
# whitespace are never visited.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]')
_QUOTE, _OPEN_OBJECT, _OPEN_ARRAY, _CLOSE_OBJECT, _CLOSE_ARRAY, _COLON, _COMMA = b'"{[}]:,'


@dataclass(frozen=True)
class ShapeLimits:
    max_depth: int
    """Nesting levels of arrays and objects (the body itself is level 1)."""
    max_keys: int
    """Keys of any one object, and keys at every level inside any object but the body itself
    (a block with its ``meta``, a message, a source)."""
    max_items: int
    """Members of any one array."""


def json_shape_problem(raw: bytes, limits: ShapeLimits) -> str | None:
    """The first cap ``raw`` passes, as a sentence; None when within all (or when it is not even
    JSON: the parser says what is wrong then)."""
    # One entry per open container: [is an object, own members, keys at every level inside].
    stack: list[list[int]] = []
    for match in _TOKENS.finditer(raw):
        char = raw[match.start()]
        if char == _QUOTE:
            continue
        if char in (_OPEN_OBJECT, _OPEN_ARRAY):
            stack.append([char == _OPEN_OBJECT, 0, 0])
            if len(stack) > limits.max_depth:
                return f"nested deeper than {limits.max_depth} levels"
        elif char in (_CLOSE_OBJECT, _CLOSE_ARRAY):
            if not stack:
                return None
            inner = stack.pop()[2]
            if stack:
                parent = stack[-1]
                parent[2] += inner
                if parent[0] and len(stack) > 1 and parent[2] > limits.max_keys:
                    return f"an object holds more than {limits.max_keys} keys at every level"
        elif not stack:
            return None
        elif char == _COLON:
            top = stack[-1]
            top[1] += 1
            top[2] += 1
            if top[1] > limits.max_keys or (len(stack) > 1 and top[2] > limits.max_keys):
                return f"an object holds more than {limits.max_keys} keys"
        elif char == _COMMA and not stack[-1][0]:
            stack[-1][1] += 1
            if stack[-1][1] >= limits.max_items:
                return f"an array holds more than {limits.max_items} members"
    return None
