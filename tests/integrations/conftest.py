"""Live-server fixtures for the integration tests (MCP server, OpenAI Agents SDK session).

The integrations talk to the service over HTTP only, so every test here runs against a real
``runserver`` process on the test database (``server`` from tests/e2e).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import server  # noqa: F401  (the live server fixture)
from timeline_app.services.api_keys import api_key_create

# py312/ holds the a1 and LangChain tests: they run in .venv312 (Python 3.12), started by
# test_py312.py, never collected by this interpreter.
collect_ignore = ["py312"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"


@dataclass(frozen=True)
class Live:
    url: str
    key: str


@pytest.fixture
def live(server) -> Live:  # noqa: F811
    """The live server's URL and a fresh API key of its own tenant."""
    _, raw_key = api_key_create(tenant_name="integrations")
    return Live(url=server, key=raw_key)


def console_script(name: str) -> str:
    """A console script installed beside the running interpreter (``.venv/bin/…``)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is not installed: run make install"
    return found
