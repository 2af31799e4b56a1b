"""Fixtures of the Python 3.12 tests: the live service (``TIMELINE_API_URL``, ``TIMELINE_API_KEY``, set
by tests/integrations/test_py312.py), a fresh conversation per test, and a second process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from timeline_client import TimelineClient

HERE = Path(__file__).resolve().parent


def service() -> tuple[str, str]:
    url, key = os.environ.get("TIMELINE_API_URL"), os.environ.get("TIMELINE_API_KEY")
    if not url or not key:
        raise RuntimeError(
            "TIMELINE_API_URL and TIMELINE_API_KEY name the live service (test_py312.py sets them)"
        )
    return url, key


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch) -> None:
    """Every a1 Runtime makes its compiled-code cache (``.a1``) in the working directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def client() -> Iterator[TimelineClient]:
    url, key = service()
    with TimelineClient(url, key) as api:
        yield api


@pytest.fixture
def conversation() -> str:
    return f"py312-{uuid.uuid4().hex[:12]}"


PRELUDE = """
import json, os, sys
from a1 import Message, get_context, get_runtime, new_context, set_runtime
from timeline_client import TimelineClient
from timeline_client.a1 import TimelineRuntime
client = TimelineClient(os.environ["TIMELINE_API_URL"], os.environ["TIMELINE_API_KEY"])
runtime = TimelineRuntime(client, sys.argv[1])
set_runtime(runtime)
def dump(messages):
    print(json.dumps([m.model_dump(mode="json") for m in messages]))
"""


def in_other_process(conversation: str, code: str) -> str:
    """Run ``code`` in a fresh interpreter with an a1 ``TimelineRuntime`` for ``conversation`` set as
    the runtime (``runtime``, ``client``, a1's functions and ``dump(messages)`` are there); its stdout."""
    script = PRELUDE + textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script, conversation],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def dumped(stdout: str) -> list[dict]:
    """The messages the other process printed with ``dump`` (its last line)."""
    return json.loads(stdout.strip().splitlines()[-1])
