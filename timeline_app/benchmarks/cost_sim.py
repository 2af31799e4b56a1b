"""A stand-in for Anthropic's prompt cache, written apart from the service's forecast model
(``rendering/usage/forecast.py``): it sees only the exact request body an agent would send
(``system`` + ``messages`` with ``cache_control`` markers) and applies the documented rules to
its bytes.

* The cache is the organisation's, shared by every conversation and context of the run, keyed by
  the SHA-256 of the canonical bytes of the request up to a content block (``cache_control``
  itself is not content).
* Each breakpoint looks back at most 20 block boundaries, itself included, for the longest cached
  prefix; the longest hit of all breakpoints is read.
* Every breakpoint after the read point whose prefix reaches the model's minimum cacheable length
  is written, 1-hour markers at the 1-hour rate up to the last of them, the rest at the 5-minute
  rate; an entry lives its TTL from its last write or read.

Token counts per block: tiktoken ``cl100k_base`` of its text (and the image estimate for a
binary part), the tokenizer the service also counts with; the real provider's differ.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from timeline_app.domain.tokens import count_binary_tokens, count_text_tokens

LOOKBACK = 20
MIN_TOKENS = {"claude-sonnet-4-5": 1024, "claude-haiku-4-5": 4096, "claude-opus-4-5": 4096}


def _block_tokens(block: dict[str, Any]) -> int:
    if block.get("type") == "text":
        return count_text_tokens(block.get("text", ""))
    source = block.get("source") or {}
    return count_binary_tokens(mime=source.get("media_type", ""), data_b64=source.get("data", ""))


def _content_bytes(block: dict[str, Any]) -> bytes:
    content = {key: value for key, value in block.items() if key != "cache_control"}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass
class AnthropicCacheSimulator:
    entries: dict[bytes, datetime] = field(default_factory=dict)

    def call(self, body: dict[str, Any], *, at: datetime) -> dict[str, Any]:
        """The ``usage`` the provider would answer for ``body`` sent at ``at``."""
        blocks: list[dict[str, Any]] = []
        system = body.get("system")
        if isinstance(system, str) and system:
            blocks.append({"type": "text", "text": system})
        elif isinstance(system, list):
            blocks.extend(system)
        for message in body["messages"]:
            content = message["content"]
            blocks.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
        hashes: list[bytes] = []
        totals: list[int] = []
        digest = hashlib.sha256(b"tools:none").digest()
        running = 0
        for block in blocks:
            digest = hashlib.sha256(digest + _content_bytes(block)).digest()
            running += _block_tokens(block)
            hashes.append(digest)
            totals.append(running)
        marks = [
            (i, 3600 if (block.get("cache_control") or {}).get("ttl") == "1h" else 300)
            for i, block in enumerate(blocks)
            if block.get("cache_control")
        ]
        assert len(marks) <= 4, "the provider refuses a fifth breakpoint"
        minimum = next((v for k, v in MIN_TOKENS.items() if body["model"].startswith(k)), 1024)
        hit = -1
        for point, _ in marks:
            for j in range(point, max(point - LOOKBACK, 0) - 1, -1):
                if self.entries.get(hashes[j], at) > at:
                    hit = max(hit, j)
                    break
        read = totals[hit] if hit >= 0 else 0
        writes = [(i, ttl) for i, ttl in marks if i > hit and totals[i] >= minimum]
        write_1h = write_5m = 0
        done = read
        hour = [i for i, ttl in writes if ttl == 3600]
        if hour:
            write_1h, done = totals[hour[-1]] - done, totals[hour[-1]]
        if writes:
            write_5m = max(totals[writes[-1][0]] - done, 0)
        if hit >= 0:
            ttl = next((t for i, t in marks if i >= hit), 300)
            self.entries[hashes[hit]] = max(self.entries.get(hashes[hit], at), at + timedelta(seconds=ttl))
        for i, ttl in writes:
            self.entries[hashes[i]] = max(self.entries.get(hashes[i], at), at + timedelta(seconds=ttl))
        total = running
        return {
            "input_tokens": total - read - write_1h - write_5m,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write_1h + write_5m,
            "cache_creation": {"ephemeral_5m_input_tokens": write_5m, "ephemeral_1h_input_tokens": write_1h},
            "output_tokens": 300,
        }
