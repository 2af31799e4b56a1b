"""The Anthropic API behind a mocked HTTP transport, for tests that drive the real SDK.

The installed anthropic SDK is built on ``httpx2`` (not ``httpx``): its client and
``MockTransport`` come from there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import httpx2

Step = httpx2.Response | Callable[[dict[str, Any]], httpx2.Response]


def message(
    text: str = "## Goals / requests\n- summary",
    *,
    input_tokens: int = 10,
    output_tokens: int = 5,
    usage: dict[str, int] | None = None,
    model: str = "claude-test",
) -> httpx2.Response:
    """A successful Messages API answer with one text block (``usage``: the whole usage object,
    cache fields too, instead of the two counts)."""
    return httpx2.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage or {"input_tokens": input_tokens, "output_tokens": output_tokens},
        },
    )


def error(status: int, type_: str, message: str | None = None) -> httpx2.Response:
    """An API error answer; the message defaults to the error type."""
    return httpx2.Response(
        status,
        json={"type": "error", "error": {"type": type_, "message": type_ if message is None else message}},
    )


class ScriptedTransport:
    """A ``MockTransport`` handler answering each request with the next step of a script.

    A step is a response or a callable taking the request's JSON body (it may raise, e.g. a
    timeout); the last step repeats. Every request is recorded with its JSON body and headers.
    """

    def __init__(self, steps: Sequence[Step]):
        assert steps, "a script needs at least one step"
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx2.Headers] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(request)
        self.bodies.append(body)
        self.headers.append(request.headers)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        return step(body) if callable(step) else step


def mock_client(
    handler: Callable[[httpx2.Request], httpx2.Response], *, api_key: str = "test", max_retries: int = 2
) -> anthropic.Anthropic:
    """A real SDK client whose requests go to ``handler``, retrying without backoff."""
    client = anthropic.Anthropic(
        api_key=api_key,
        max_retries=max_retries,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    client._calculate_retry_timeout = lambda *args, **kwargs: 0.0  # type: ignore[method-assign]
    return client
