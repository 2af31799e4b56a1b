"""The request head: what precedes the blocks in the model call (the tool definitions, then the
system prompt) and the model it goes to.

``request_head`` builds it once per render, with the one digest that identifies the head in the
cache fingerprint: the render seeds its prefix with it and records it, and the compaction that
resends a cached render builds it again from the record's system prompt. Both ends call
``request_head``, so the two fingerprints agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from timeline_app.domain.tokens import count_text_tokens


@dataclass(frozen=True)
class RequestHead:
    """The head of one render's request. ``digest`` "" (the default): the caller named no head
    (a service call without one), and the fingerprint is seeded with nothing."""

    system_text: str = ""
    system_tokens: int = 0
    tools_tokens: int = 0
    model: str = ""
    digest: str = ""

    @property
    def tokens(self) -> int:
        """What the head costs in the request: the tool definitions and the system prompt."""
        return self.system_tokens + self.tools_tokens

    @property
    def resendable_system_text(self) -> str:
        """The system prompt a summary request can resend as this render's head: the text when no
        tool definitions precede it (the record does not keep those), else ""."""
        return "" if self.tools_tokens else self.system_text


def head_digest(system_text: str, tools_tokens: int = 0) -> str:
    """What identifies the request's head in the cache fingerprint: the system prompt's hash, and
    the tool definitions' size when the caller gives it (tools precede the system prompt)."""
    digest = hashlib.sha256(system_text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}|tools={tools_tokens}" if tools_tokens else digest


def request_head(
    *, system_text: str = "", system_tokens: int | None = None, tools_tokens: int = 0, model: str = ""
) -> RequestHead:
    """The head of a request with its digest; ``system_tokens`` None: counted from the text."""
    return RequestHead(
        system_text=system_text,
        system_tokens=count_text_tokens(system_text) if system_tokens is None else system_tokens,
        tools_tokens=tools_tokens,
        model=model,
        digest=head_digest(system_text, tools_tokens),
    )
