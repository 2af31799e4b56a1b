"""The README's "Try it" steps, in order, on a fresh clone of the checkout's commit with nothing
installed: ``make run`` (its own .venv, SQLite), the curl call with the printed key, then
``.venv/bin/python docs/examples/client_quickstart.py``; Ctrl-C stops everything (issue 30, defect
7: the client step failed with ``No module named 'timeline_client'`` until ``make test`` had
installed the dev extra).

Slow (``make run`` installs the service's packages into a new virtualenv) and needs the package
index the machine's pip uses."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import ROOT, default_signals, free_port, group_alive, kill_group, wait_for

pytestmark = pytest.mark.e2e

# What a newcomer's shell does not have: the suite's own settings and interpreter path.
NOT_IN_A_NEW_SHELL = (
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "DJANGO_",
    "CELERY_",
    "DATABASE_URL",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DEBUG",
    "TIMELINE_",
    "TEST_",
    "PROMETHEUS_",
    "HYPOTHESIS_",
)


def fresh_clone(tmp_path: Path) -> Path:
    """A clone of the commit the checkout is on (committed work only, no .venv, no var/)."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True, timeout=120
    )
    subprocess.run(["git", "checkout", "--quiet", commit], cwd=clone, check=True, timeout=60)
    assert not (clone / ".venv").exists()
    return clone


def test_the_readme_steps_run_in_order_on_a_fresh_clone(tmp_path):
    clone = fresh_clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(NOT_IN_A_NEW_SHELL)}
    port = free_port()
    log_path = tmp_path / "make-run.log"

    def logs() -> str:
        return log_path.read_text(errors="replace")

    with open(log_path, "wb") as log:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "run", f"PORT={port}"],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_signals,
        )
    try:
        # Step 1: make run installs, migrates, loads the demo and serves.
        wait_for(
            lambda: "API key: tlk_" in logs() or make.poll() is not None,
            timeout=600,
            what="make run to install and print the demo key",
            logs=logs,
        )
        key = re.search(r"API key: (tlk_\S+)", logs())
        assert key, logs()
        wait_for(lambda: _serves(port), timeout=120, what="the server", logs=logs)

        # Step 2: the curl call, as written (the key make run printed).
        curl = subprocess.run(
            [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-H",
                f"Authorization: Bearer {key[1]}",
                f"http://127.0.0.1:{port}/api/v1/conversations/demo-wuppertal/",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert curl.stdout == "200", (curl.stdout, curl.stderr)

        # Step 3: the Python client's quickstart with the project's interpreter.
        quickstart = subprocess.run(
            [".venv/bin/python", "docs/examples/client_quickstart.py"],
            cwd=clone,
            env={**env, "TIMELINE_API_KEY": key[1], "TIMELINE_API_URL": f"http://127.0.0.1:{port}"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert quickstart.returncode == 0, quickstart.stderr[-3000:]
        assert re.fullmatch(r"\d+ visible tokens in \d+ parts", quickstart.stdout.strip()), quickstart.stdout

        # Ctrl-C (SIGINT to make's process group) stops every process make run started.
        started = [int(pid) for pid in re.findall(r"== started \w+ \(pid (\d+)\)", logs())]
        os.killpg(make.pid, signal.SIGINT)
        make.wait(60)
        assert started and not any(group_alive(pid) for pid in started), logs()
    finally:
        for pid in re.findall(r"== started \w+ \(pid (\d+)\)", logs()):
            if group_alive(int(pid)):
                os.killpg(int(pid), signal.SIGKILL)
        kill_group(make)


def _serves(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
