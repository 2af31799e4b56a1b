"""The tokens of a provider request's content, block by block (pure): the one definition of a
cached prefix's length that the native renders (their cache planner and usage forecast) and the
provider cache simulators of ``bench cache-cost`` (``benchmarks/provider_sim.py``) share.

A prefix's length is the sum, in the order the provider reads the prompt, of its content blocks'
tokens: an Anthropic block's text (a ``tool_use``'s name and JSON input, a ``tool_result``'s
content, a thinking block's thinking), an OpenAI part's text (a ``function_call``'s name and
arguments), an image or a document by ``count_binary_tokens``; anything else (a tool definition, a
reasoning item) its JSON. Cache markers (``cache_control``, ``prompt_cache_breakpoint``) are not
content. The counter is the project's (``domain.tokens``).

A native request repeats most of its text render after render (the history is appended to): the
text counts are remembered (:func:`text_tokens`, least recently used first out, at most
``MEMO_CHARS`` characters held), so a render tokenizes only what is new.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from timeline_app.domain.tokens import count_binary_tokens, count_text_tokens

MEMO_CHARS = 8_000_000
MARKERS = frozenset({"cache_control", "prompt_cache_breakpoint"})

_memo: OrderedDict[str, int] = OrderedDict()
_memo_chars = 0
_lock = threading.Lock()


def text_tokens(text: str) -> int:
    """``count_text_tokens(text)``, remembered."""
    global _memo_chars
    if not text:
        return 0
    with _lock:
        known = _memo.get(text)
        if known is not None:
            _memo.move_to_end(text)
            return known
    tokens = count_text_tokens(text)
    if len(text) > MEMO_CHARS // 8:
        return tokens
    with _lock:
        if text not in _memo:
            _memo[text] = tokens
            _memo_chars += len(text)
            while _memo_chars > MEMO_CHARS:
                old, _ = _memo.popitem(last=False)
                _memo_chars -= len(old)
    return tokens


def _json_tokens(value: Any) -> int:
    if isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k not in MARKERS}
    return text_tokens(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def anthropic_block_tokens(block: Any) -> int:
    """The tokens of one Anthropic content block (or system text block, or tool definition)."""
    if isinstance(block, str):
        return text_tokens(block)
    if not isinstance(block, Mapping):
        return _json_tokens(block)
    kind = block.get("type")
    if kind == "text":
        return text_tokens(str(block.get("text", "")))
    if kind in ("image", "document"):
        source = block.get("source") or {}
        if source.get("type") == "base64":
            return count_binary_tokens(
                mime=str(source.get("media_type", "")), data_b64=str(source.get("data", ""))
            )
        return count_binary_tokens(mime="image/png" if kind == "image" else "application/pdf", data_b64="x")
    if kind == "tool_use":
        return text_tokens(str(block.get("name", ""))) + text_tokens(
            json.dumps(block.get("input", {}), sort_keys=True, ensure_ascii=False)
        )
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return text_tokens(content)
        return sum(anthropic_block_tokens(part) for part in content)
    if kind == "thinking":
        return text_tokens(str(block.get("thinking", "")))
    if kind == "redacted_thinking":
        return text_tokens(str(block.get("data", "")))
    return _json_tokens(block)


def anthropic_blocks(request: Mapping[str, Any]) -> Iterator[tuple[int, int, Any]]:
    """The content blocks of a ``messages.create`` body in the order the cache reads them:
    ``(message index, block index, block)``; tools first (message -2), then ``system`` (-1)."""
    for position, tool in enumerate(request.get("tools") or []):
        yield -2, position, tool
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    for position, block in enumerate(system):
        yield -1, position, block
    for index, message in enumerate(request.get("messages") or []):
        content = message.get("content", "")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for position, block in enumerate(content):
            yield index, position, block


def openai_part_tokens(part: Any) -> int:
    """The tokens of one OpenAI input or output part, function call or other item."""
    if isinstance(part, str):
        return text_tokens(part)
    if not isinstance(part, Mapping):
        return 0
    kind = part.get("type")
    if kind in ("input_text", "text", "output_text"):
        return text_tokens(str(part.get("text", "")))
    url = part.get("image_url")
    if isinstance(url, Mapping):
        url = url.get("url")
    data = part.get("file_data") or (part.get("file") or {}).get("file_data") or url
    if isinstance(data, str) and data.startswith("data:") and ";base64," in data:
        head, payload = data[5:].split(";base64,", 1)
        return count_binary_tokens(mime=head, data_b64=payload)
    if kind in ("input_image", "image_url", "input_file", "file"):
        return count_binary_tokens(mime="image/png", data_b64="x")
    if kind == "function_call":
        return text_tokens(str(part.get("name", ""))) + text_tokens(str(part.get("arguments", "")))
    return _json_tokens(part)


def openai_parts(request: Mapping[str, Any]) -> Iterator[tuple[int, str, int, Any]]:
    """The parts of a ``responses.create`` / ``chat.completions.create`` body in prompt order:
    ``(item index, where, part index, part)``; ``instructions`` first (item -1); an item's
    ``content`` or ``output`` parts (``where`` that key; a string is one part), a Chat message's
    ``tool_calls`` after them (``tool_calls``), a function call or reasoning item as one part
    (``item``)."""
    instructions = request.get("instructions")
    if isinstance(instructions, str) and instructions:
        yield -1, "instructions", 0, instructions
    items = request.get("input", request.get("messages")) or []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind in ("function_call", "reasoning"):
            yield index, "item", 0, item
            continue
        key = "output" if kind == "function_call_output" else "content"
        parts = item.get(key)
        parts = [parts] if isinstance(parts, str) or parts is None else list(parts)
        for position, part in enumerate(parts):
            yield index, key, position, part
        for position, call in enumerate(item.get("tool_calls") or []):
            yield index, "tool_calls", position, call
