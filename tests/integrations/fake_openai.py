"""A scripted stand-in for the OpenAI Responses API on loopback, for docs/examples/openai_agents_runner.py.

The Agents SDK's default model posts to ``$OPENAI_BASE_URL/responses``; this server answers
from the request's ``input``: a question about an order gets a ``lookup_order`` call, a tool
output gets an answer quoting it, and any other question is answered from the history it was
sent (so it only knows the carrier when the session gave it the earlier turn).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _response(number: int, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "scripted",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _message(number: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def answer(number: int, items: list[dict[str, Any]]) -> dict[str, Any]:
    last = items[-1]
    if last.get("type") == "function_call_output":
        found = json.loads(last["output"])
        return _response(number, [_message(number, f"Order {found['order']} has {found['status']}.")])
    question = last.get("content") if isinstance(last.get("content"), str) else ""
    order = re.search(r"order (\d+)", question)
    if order:
        call = {
            "type": "function_call",
            "id": f"fc_{number}",
            "call_id": f"call_{number}",
            "name": "lookup_order",
            "arguments": json.dumps({"order": order.group(1)}),
            "status": "completed",
        }
        return _response(number, [call])
    outputs = [json.loads(i["output"]) for i in items if i.get("type") == "function_call_output"]
    text = f"It went with {outputs[-1]['carrier']}." if outputs else "I have no order on record."
    return _response(number, [_message(number, text)])


@contextmanager
def fake_responses_api() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(base_url, requests)``: the server's ``/v1`` URL and every request body it got."""
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/responses":
                self.send_error(404)
                return
            requests.append(body)
            payload = json.dumps(answer(len(requests), body["input"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()
