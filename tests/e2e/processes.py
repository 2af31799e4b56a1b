"""Helpers for end-to-end tests that start real processes (servers, workers, ``make serve``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from timeline_app.models import Compaction

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "")
# The marks of a test that runs real workers or servers on Redis and PostgreSQL.
NEEDS_REDIS_AND_POSTGRES = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not REDIS_URL or "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="needs TEST_REDIS_URL and PostgreSQL (make test / scripts/test.sh)",
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def live_database_url() -> str:
    """The live test database (the ``test_…`` one pytest-django created), as a URL for a child."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def wait_for(
    condition: Callable[[], object], *, timeout: float, what: str, logs: Callable[[], str] = str
) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")


def wait_for_applied_compaction(task_id: str, *, logs: Callable[[], str]) -> None:
    """Wait until a worker has applied the compaction that the task ``task_id`` claimed."""
    wait_for(
        lambda: Compaction.objects.filter(task_id=task_id, status="applied").exists(),
        timeout=60,
        what="the worker to apply the compaction",
        logs=logs,
    )


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def default_signals() -> None:
    """``preexec_fn`` for a child that a test stops with a terminal's Ctrl-C (SIGINT): the default
    disposition again. A shell starts a background job (``make test &``) with SIGINT ignored, the
    ignore is inherited through exec, and a non-interactive shell cannot trap a signal ignored on
    entry: ``make run``'s Ctrl-C handler never ran and the test timed out (issue 30, defect 9)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``; kill it if it has not exited 10 s later."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process started with ``start_new_session=True`` and everything in its group."""
    if group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)
