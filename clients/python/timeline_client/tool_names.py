"""Tool names the providers accept: the client's copy of ``timeline_app.rendering.native.tool_names``
(the client imports no server code; ``tests/client/test_tool_names.py`` keeps the two equal).

Anthropic and OpenAI take tool names and tool-use ids of ``[A-Za-z0-9_-]`` only, names at most 64
characters. A seed tool id such as ``web_tools.web_search`` is not one, so it is mapped, one way
for every format and documented in ``docs/native-formats.md``:

* letters, digits and ``_`` stay as they are;
* every other character (``-`` included) becomes ``-`` and two lowercase hex digits per UTF-8 byte
  (``.`` → ``-2e``, ``-`` → ``-2d``, ``é`` → ``-c3-a9``): ``web_tools.web_search`` →
  ``web_tools-2eweb_search``. Because a literal ``-`` is escaped too, the mapping is reversible;
* a name whose mapped form is longer than 64 characters keeps its first 50 characters and ends in
  ``-h`` and 12 hex digits of the SHA-256 of the original name (``-h`` is no escape, so such a name
  never collides with a shorter one); it reverses against the list of names the agent declares.

Gemini takes ``[A-Za-z0-9_.:-]``, up to 128 characters, but the first must be a letter or ``_``:
``gemini_tool_name(provider_tool_name(name))`` is the name to declare to Gemini.

The Python client carries the same functions (``timeline_client.tool_names``), so an agent
declares its tools to the provider under the very names the render uses.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME_CHARS = 64
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
GEMINI_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
GEMINI_PREFIX = "_-g"
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_HASHED_HEAD = 50
_HASH_DIGITS = 12
_ESCAPE = re.compile(r"-([0-9a-f]{2})")


def escape(text: str) -> str:
    """``text`` with every character outside ``[A-Za-z0-9_]`` written as ``-xx`` per UTF-8 byte."""
    if all(c in _KEPT for c in text):
        return text
    out: list[str] = []
    for char in text:
        if char in _KEPT:
            out.append(char)
        else:
            out.extend(f"-{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def unescape(text: str) -> str:
    """The inverse of :func:`escape` (raises ``ValueError`` on a text :func:`escape` never gives)."""
    if "-" not in text:
        return text
    raw = bytearray()
    at = 0
    while at < len(text):
        if text[at] == "-":
            match = _ESCAPE.match(text, at)
            if match is None:
                raise ValueError(f"not an escaped name: {text!r}")
            raw.append(int(match.group(1), 16))
            at = match.end()
        else:
            raw.extend(text[at].encode())
            at += 1
    return raw.decode("utf-8", "surrogatepass")


def provider_tool_name(name: str) -> str:
    """The name a provider accepts for the tool the timeline calls ``name``."""
    escaped = escape(name) or "-00"
    if len(escaped) <= MAX_NAME_CHARS:
        return escaped
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    head = escaped[:_HASHED_HEAD]
    # Never cut an escape in half: drop a trailing partial ``-x``.
    cut = head.rfind("-", len(head) - 2)
    if cut != -1:
        head = head[:cut]
    return f"{head}-h{digest}"


def gemini_tool_name(mapped: str) -> str:
    """The name Gemini accepts for a name :func:`provider_tool_name` gave: the same, with
    ``_-g`` before it when it does not start with a letter or ``_``."""
    first = mapped[:1]
    if first == "_" or (first.isascii() and first.isalpha()):
        return mapped
    return GEMINI_PREFIX + mapped


def timeline_tool_name(provider_name: str, declared: Iterable[str] = ()) -> str:
    """The timeline's name for a provider tool name: the inverse of :func:`provider_tool_name`
    (and of :func:`gemini_tool_name`).

    A hashed (shortened) name is looked up among ``declared`` (the agent's own tool names); any
    other name reverses by itself. Raises ``ValueError`` when it cannot be reversed.
    """
    if provider_name.startswith(GEMINI_PREFIX):
        provider_name = provider_name[len(GEMINI_PREFIX) :]
    if re.search(r"-h[0-9a-f]{12}$", provider_name):
        for name in declared:
            if provider_tool_name(name) == provider_name:
                return name
        raise ValueError(f"{provider_name!r} is a shortened tool name; declare the original")
    name = unescape(provider_name)
    if provider_tool_name(name) != provider_name:
        raise ValueError(f"{provider_name!r} is no mapped tool name")
    return name
