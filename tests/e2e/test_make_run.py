"""``make run PORT=…`` with a broker: the server and the worker (with its embedded beat) start, the
printed key works, a second run revokes the first run's key, and SIGTERM to make stops them all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import (
    REDIS_URL,
    ROOT,
    default_signals,
    free_port,
    group_alive,
    kill_group,
    wait_for,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not REDIS_URL, reason="needs TEST_REDIS_URL (make test / scripts/test.sh)"),
]


def make_run(tmp_path: Path, port: int, attempt: int, *, ctrl_c: bool) -> tuple[str, dict[str, int]]:
    """Start ``make run``, wait until it serves, stop it (SIGTERM to make, or a terminal's Ctrl-C:
    SIGINT to make's process group), and return the printed key and the pids it started."""
    log_path = tmp_path / f"run{attempt}.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "DJANGO_"))},
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": REDIS_URL,
    }
    with open(log_path, "wb") as log:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_signals,  # Ctrl-C works even when this test runs in a background job
        )

    def logs() -> str:
        return log_path.read_text(errors="replace")

    def started() -> dict[str, int]:
        return {name: int(pid) for name, pid in re.findall(r"== started (\w+) \(pid (\d+)\)", logs())}

    try:
        wait_for(
            lambda: (" ready." in logs() and f"127.0.0.1:{port}/" in logs()) or make.poll() is not None,
            timeout=180,
            what="make run to start the worker and the server",
            logs=logs,
        )
        wait_for(lambda: _healthy(port), timeout=60, what="the server", logs=logs)
        key = re.search(r"API key: (tlk_\S+)", logs())
        assert key, logs()
        assert f"Admin:   http://127.0.0.1:{port}/admin/" in logs()
        pids = started()
        assert set(pids) == {"worker", "server"}
        assert (
            httpx.get(f"http://127.0.0.1:{port}/api/v1/conversations/", headers=_auth(key[1])).status_code
            == 200
        )
        if ctrl_c:
            os.killpg(make.pid, signal.SIGINT)
        else:
            make.send_signal(signal.SIGTERM)
        make.wait(60)
        for name, pid in pids.items():
            assert not group_alive(pid), f"{name} (pid {pid}) survived make run\n{logs()}"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
        return key[1], pids
    finally:
        for pid in started().values():
            if group_alive(pid):
                os.killpg(pid, signal.SIGKILL)
        kill_group(make)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).json()["checks"]["broker"] == "ok"
    except httpx.HTTPError:
        return False


def test_make_run_serves_on_its_port_prints_one_valid_key_and_stops_everything_on_sigterm_or_ctrl_c(tmp_path):
    port = free_port()
    first_key, _ = make_run(tmp_path, port, 1, ctrl_c=False)
    second_key, _ = make_run(tmp_path, port, 2, ctrl_c=True)

    assert first_key != second_key
    # Both runs stopped; a last look at the keys straight in the run's database.
    script = (
        "from timeline_app.models import ApiKey; "
        "print(sorted((k.revoked_at is None) for k in ApiKey.objects.filter(tenant__name='demo')))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip().splitlines()[-1] == "[False, True]", result.stderr
