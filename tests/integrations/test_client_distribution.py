"""The Python client is its own distribution: ``pip install ./clients/python`` in a fresh virtualenv
installs httpx and nothing of the server, and its quickstart (docs/examples/client_quickstart.py) runs there against a live server."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.integrations.conftest import EXAMPLES, ROOT, Live

pytestmark = pytest.mark.e2e

CLIENT = ROOT / "clients" / "python"
SERVER_PACKAGES = {
    "django",
    "djangorestframework",
    "celery",
    "psycopg",
    "psycopg-binary",
    "kombu",
    "anthropic",
}


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory) -> Path:
    """A fresh virtualenv holding the client distribution alone (installed from the checkout, not
    editable, so only what the distribution ships is importable)."""
    home = tmp_path_factory.mktemp("client-venv")
    venv.EnvBuilder(with_pip=True, symlinks=True).create(home)
    python = home / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(CLIENT)],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return python


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without PYTHONPATH, so nothing of the checkout is importable."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    return {**env, **extra}


def installed(python: Path) -> set[str]:
    done = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("==")[0].lower() for line in done.stdout.splitlines() if "==" in line}


def test_the_client_installs_alone_with_httpx_only(client_venv: Path):
    packages = installed(client_venv)
    assert {"timeline-client", "httpx"} <= packages
    assert not packages & SERVER_PACKAGES, f"server packages came along: {packages & SERVER_PACKAGES}"
    done = subprocess.run(
        [str(client_venv), "-c", "import timeline_client, sys; print(timeline_client.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    assert "site-packages" in done.stdout, "imported from the installed distribution, not the checkout"
    typed = subprocess.run(
        [
            str(client_venv),
            "-c",
            "import importlib.resources as r; print(r.files('timeline_client').joinpath('py.typed').is_file())",
        ],
        capture_output=True,
        text=True,
        cwd="/",
        env=clean_env(),
    )
    assert typed.stdout.strip() == "True", "py.typed ships with the package"


def test_the_client_quickstart_runs_in_that_virtualenv(client_venv: Path, live: Live, tmp_path: Path):
    """docs/examples/client_quickstart.py, which the client's README shows, with only the client
    installed."""
    example = EXAMPLES / "client_quickstart.py"
    env = clean_env(TIMELINE_API_KEY=live.key, TIMELINE_API_URL=live.url)
    done = subprocess.run(
        [str(client_venv), str(example)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("parts"), done.stdout
    assert sys.executable != str(client_venv)


def test_the_client_errors_example_runs_in_that_virtualenv(client_venv: Path, live: Live, tmp_path: Path):
    """docs/examples/client_errors.py, which docs/client.md shows: a stored contribution, the
    service's 404 as ``TimelineAPIError``, an unreachable service as ``TimelineUnavailable``."""
    env = clean_env(TIMELINE_API_KEY=live.key, TIMELINE_API_URL=live.url)
    done = subprocess.run(
        [str(client_venv), str(EXAMPLES / "client_errors.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "stored", lines
    assert lines[1] == "refused: 404 not_found", lines
    assert lines[2].startswith("unavailable (maybe processed: False)"), lines
