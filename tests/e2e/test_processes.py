"""The helpers that start real processes: a child a test stops with Ctrl-C gets SIGINT's default
disposition back even when the test itself runs with SIGINT ignored (``make test &``)."""

from __future__ import annotations

import signal
import subprocess
import sys

from tests.e2e.processes import default_signals

IGNORED = (
    "import signal; "
    "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN)"
)


def run_child(**popen: object) -> str:
    return subprocess.run(
        [sys.executable, "-c", IGNORED], capture_output=True, text=True, check=True, timeout=30, **popen
    ).stdout.strip()


def test_a_child_started_with_default_signals_can_be_interrupted_when_the_parent_ignores_sigint():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    try:
        assert run_child() == "True True", "a background job's child inherits the ignore"
        assert run_child(preexec_fn=default_signals) == "False False"
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGQUIT, previous[1])
