"""The a1 and LangChain integrations, tested where they run: a Python 3.12 virtualenv (``.venv312``,
made by scripts/py312_env.sh from the pinned scripts/py312-requirements.txt) with the real
``a1-compiler`` and ``langchain`` packages and the client of this checkout, against the live test
server. The tests themselves are tests/integrations/py312/ (their own pytest root); the examples of
docs/integrations.md for a1 and LangChain run here too. No Python >= 3.12 on the machine is a
failure with the script's message, never a skip."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.integrations.conftest import EXAMPLES, ROOT, Live

pytestmark = pytest.mark.e2e

PY312_TESTS = ROOT / "tests" / "integrations" / "py312"


@pytest.fixture(scope="module")
def python312() -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "py312_env.sh")], capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, f"scripts/py312_env.sh failed:\n{done.stderr[-4000:]}"
    return done.stdout.strip().splitlines()[-1]


def env312(live: Live) -> dict[str, str]:
    """The live service, and the client of this checkout first on the path (not the server's code)."""
    return {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PYTHONPATH": str(ROOT / "clients" / "python"),
        "TIMELINE_API_URL": live.url,
        "TIMELINE_API_KEY": live.key,
        "ANTHROPIC_API_KEY": "",
    }


def test_a1_and_langchain_tests_pass_on_python_312(python312: str, live: Live):
    version = subprocess.run(
        [python312, "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"],
        capture_output=True,
        text=True,
    )
    assert version.stdout.strip() == "True"
    done = subprocess.run(
        [python312, "-m", "pytest", "-c", str(PY312_TESTS / "pytest.ini"), str(PY312_TESTS), "-q"],
        cwd=ROOT,
        env=env312(live),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) >= 30, summary
    assert "skipped" not in summary and "failed" not in summary, summary


def run312(python312: str, live: Live, name: str, cwd: Path) -> list[str]:
    done = subprocess.run(
        [python312, str(EXAMPLES / name)],
        cwd=cwd,
        env=env312(live),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout.splitlines()


def test_the_a1_example_runs(python312: str, live: Live, tmp_path: Path):
    out = run312(python312, live, "a1_runtime.py", tmp_path)
    assert out == [
        "user 'What is 2+2?' ",
        "assistant '' ",
        "tool '{\"result\": 4}' call_1",
        "assistant '4' ",
        "assistant '4' ",
        "['attempt_a', 'main']",
    ], "the second process saw both contexts, the branched messages once"


def test_the_langchain_example_runs(python312: str, live: Live, tmp_path: Path):
    out = run312(python312, live, "langchain_agent.py", tmp_path)
    assert out[0] == "Order 1234 shipped on 2026-11-20 with DHL."
    assert [line.split(" ")[0] for line in out[1:9]] == ["user", "assistant", "tool", "assistant"] * 2
    assert "tool call_6 " in out[7], (
        "the second run's model saw 6 messages: the first run came from the service"
    )
    assert out[-1] == "reported renders: 4"
