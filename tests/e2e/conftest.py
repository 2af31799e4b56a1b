from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from django.db import connection

from tests.e2e.processes import ROOT, free_port, live_database_url


@pytest.fixture
def server(transactional_db) -> Iterator[str]:
    """A real server process (``manage.py runserver``) on the test database."""
    if connection.vendor != "postgresql":
        pytest.skip("the server process shares the database: run under make test (PostgreSQL)")
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": live_database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                output = (
                    process.stdout.read().decode() if process.poll() is not None and process.stdout else ""
                )
                raise RuntimeError(f"server did not start: {output[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
