from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from django.db import connection

from tests.e2e.processes import ROOT, free_port, live_database_url, stop


@pytest.fixture
def server(transactional_db, tmp_path_factory) -> Iterator[str]:
    """A real server process (``manage.py runserver``) on the test database.

    Its output goes to a file: an unread pipe fills up (one log line a request) and blocks the
    server mid-test."""
    if connection.vendor != "postgresql":
        pytest.skip("the server process shares the database: run under make test (PostgreSQL)")
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": live_database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
        cwd=ROOT,
        env=env,
        stdout=log,
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
                output = log_path.read_text(errors="replace")
                raise RuntimeError(f"server did not start: {output[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        stop(process)
        log.close()
