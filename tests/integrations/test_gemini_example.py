"""docs/examples/gemini_tool_loop.py runs as written against a live server: a native tool-use loop
on the real google-genai SDK (mocked transport), every request valid by the SDK's own types and
Gemini's rules, the thought signatures back on the function calls that carried them, a follow-up
render after the model's answer ending with the user's continue message, and a prefill render
refused by the scripted model as the API does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from timeline_client import TimelineClient

from tests.integrations.conftest import ROOT, Live

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "docs" / "examples" / "gemini_tool_loop.py"


def test_the_offline_gemini_tool_loop_stays_valid_and_sends_the_signatures_back(live: Live):
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
    out = done.stdout.splitlines()
    assert out[-1] == "7 model calls, every request valid", out
    assert out[-2] == "3 requests sent the thought signatures back on their function calls", out
    assert out[-3] == "a prefill render (prefill) was refused: 400", out
    assert "turn 3: answer: Order 1004 ships tomorrow." in out, out
    assert any(line.startswith("turn follow-up:") and "ending continue_text" in line for line in out), out
    assert "follow-up: answer: Order 1004 ships tomorrow." in out, out
    cached = [line for line in out if "billed cached" in line and "billed cached 0 " not in line]
    assert cached, "the implicit cache was read"
    with TimelineClient(live.url, live.key) as api:
        (conversation,) = [c for c in api.conversations() if c["title"] == "Offline Gemini tool loop"]
        usage = api.usage(conversation["id"])
        thinking = api.export(conversation["id"])["blocks"]
    assert usage["renders"] == 7
    kinds = {block["meta"]["kind"] for block in thinking if block["type"] == "react.thinking"}
    assert kinds == {"thought", "signature"}
