"""docs/examples/anthropic_tool_loop.py runs as written against a live server: a native tool-use
loop on the real anthropic SDK (mocked transport) through a compaction and a TTL prune, every
request valid by the SDK types and the provider's rules, extended thinking on (every request with a
pending tool_use sends the reply's signed thinking block back first in that assistant message); a
follow-up call after the answer goes through (the render ends with the user's continue message)
and the same render with prefill is the API's 400."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from timeline_client import TimelineClient

from tests.integrations.conftest import ROOT, Live

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "docs" / "examples" / "anthropic_tool_loop.py"


def run_script(live: Live) -> list[str]:
    """``.venv/bin/python docs/examples/…`` from the repository root, with the key exported."""
    env = {**os.environ, "TIMELINE_API_URL": live.url, "TIMELINE_API_KEY": live.key}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE.relative_to(ROOT))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout.splitlines()


def test_the_offline_anthropic_tool_loop_compacts_prunes_and_stays_valid(live: Live):
    out = run_script(live)
    assert out[-1] == "9 model calls, every request valid"
    assert out[-2] == "4 requests sent the signed thinking back first with their tool_use"
    assert out[-4] == (
        "follow-up, ending prefill: 400 This model does not support assistant message prefill. "
        "The conversation must end with a user message."
    ), out
    assert out[-3] == "follow-up, ending continue_text: answer: Order 1005 ships tomorrow.", out
    text = "\n".join(out)
    assert "the render compacted: summary at" in text
    assert any(line.startswith("turn 4: the cache expired, TTL pruning hid ") for line in out)
    assert "turn 4: answer: Order 1005 ships tomorrow." in out, text
    reads = [int(line.split("cache read ")[1].split(",")[0]) for line in out if "cache read" in line]
    assert max(reads) > 0, "the provider cache was read"
    with TimelineClient(live.url, live.key) as api:
        (conversation,) = [c for c in api.conversations() if c["title"] == "Offline tool loop"]
        found = api.search(conversation["id"], "1005")
    assert any(hit["type"] == "react.tool.result" for hit in found), "the results are stored"
