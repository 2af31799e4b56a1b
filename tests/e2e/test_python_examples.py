"""The Python examples docs/examples/agent_loop.py and contexts.py run as written with the project's interpreter against a live
server, twice each (a second run must not trip over the first). The Anthropic one talks to a
local stand-in for the Messages API (``ANTHROPIC_BASE_URL``)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.e2e.processes import ROOT
from timeline_app.services.api_keys import api_key_create

pytestmark = pytest.mark.e2e

# The examples on the client and named contexts (tests/integrations/test_examples.py runs those of
# the integrations, tests/integrations/test_client_distribution.py the client's quickstart).
EXAMPLES = [ROOT / "docs" / "examples" / name for name in ("agent_loop.py", "contexts.py")]


class FakeMessages(BaseHTTPRequestHandler):
    """Asks for ``lookup_order`` until the rendered context holds its result, then answers."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        context = json.dumps(body["messages"])
        if "delivered" in context:
            content = [{"type": "text", "text": "Yes: order 1234 is refundable until 2026-12-01."}]
            stop = "end_turn"
        else:
            content = [
                {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order": "1234"}}
            ]
            stop = "tool_use"
        answer = {
            "id": f"msg_{len(context)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def anthropic_stand_in() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeMessages)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_the_two_python_examples_are_what_they_say():
    assert "anthropic.Anthropic()" in EXAMPLES[0].read_text() and "get_context" in EXAMPLES[1].read_text()


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=["agent_loop", "contexts"])
def test_a_python_example_runs_twice(server, anthropic_stand_in, tmp_path, index):
    _, key = api_key_create(tenant_name="readme")
    script = EXAMPLES[index]
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{ROOT}:{ROOT / 'clients' / 'python'}",  # this tree's client, not the installed one
        "TIMELINE_API_URL": server,
        "TIMELINE_API_KEY": key,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": anthropic_stand_in,
    }
    outputs = []
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stdout + run.stderr
        outputs.append(run.stdout)
    if index == 0:
        assert outputs == ["Yes: order 1234 is refundable until 2026-12-01.\n"] * 2
    else:
        assert "Total messages: 2" in outputs[1] and "After clear: 0 messages" in outputs[1]
