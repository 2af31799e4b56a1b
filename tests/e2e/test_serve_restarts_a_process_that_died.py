"""``make serve`` (scripts/serve.sh, run directly here on the test PostgreSQL and Redis) restarts a
process that died instead of stopping the stack (issue 30, defect 8): the Celery worker killed
twice is started again each time after a back-off (1 s, then 2 s) with a log line, gunicorn and
beat keep running as they were, the new worker runs a compaction, and SIGTERM still stops every
process, the restarted worker included. A process that keeps dying stops the stack with a line
that says so."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.processes import (
    NEEDS_REDIS_AND_POSTGRES,
    REDIS_URL,
    ROOT,
    free_port,
    group_alive,
    kill_group,
    wait_for,
    wait_for_applied_compaction,
)
from tests.e2e.test_make_serve import HTTPS, Served, serve_env
from tests.factories import SMALL, fill_to
from timeline_app.models import Timeline
from timeline_app.services.api_keys import api_key_create

pytestmark = NEEDS_REDIS_AND_POSTGRES


def pids(served: Served, name: str) -> list[int]:
    return [int(pid) for pid in re.findall(rf"== started {name} \(pid (\d+)\)", served.log())]


@pytest.fixture
def serve(tmp_path) -> Iterator[Served]:
    import redis

    redis.Redis.from_url(REDIS_URL).delete("celery", "unacked", "unacked_index")
    port = free_port()
    log_path = tmp_path / "serve.log"
    env = {**serve_env(tmp_path, port), "RESTART_STABLE_SECONDS": "120", "RESTART_LIMIT": "3"}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["bash", "scripts/serve.sh"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = Served(process, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_for(
            lambda: (
                (len(running.started()) == 3 and " ready." in running.log()) or process.poll() is not None
            ),
            timeout=120,
            what="serve.sh to start gunicorn, the worker and beat",
            logs=running.log,
        )
        assert process.poll() is None, running.log()
        yield running
    finally:
        for name in ("gunicorn", "worker", "beat"):
            for pid in pids(running, name):
                if group_alive(pid):
                    os.killpg(pid, signal.SIGKILL)
        kill_group(process)


def kill_worker(served: Served, restart: int, delay: int) -> int:
    """SIGKILL the running worker's process group; wait until serve.sh has said so and started
    the next one, and that one is ready. Returns the new worker's pid."""
    (worker, *_) = pids(served, "worker")[-1:]
    os.killpg(worker, signal.SIGKILL)
    said = f"== worker (pid {worker}) exited (status 137)"
    wait_for(
        lambda: said in served.log(), timeout=30, what="the line saying the worker died", logs=served.log
    )
    assert f"restarting it in {delay}s (restart {restart})" in served.log(), served.log()
    wait_for(
        lambda: len(pids(served, "worker")) == restart + 1 and served.log().count(" ready.") >= restart + 1,
        timeout=90,
        what=f"the worker to be started again ({restart})",
        logs=served.log,
    )
    return pids(served, "worker")[-1]


def test_a_killed_worker_is_restarted_with_a_back_off_and_the_rest_keeps_running(serve):
    client = httpx.Client(base_url=serve.base, timeout=30)
    gunicorn, beat = pids(serve, "gunicorn"), pids(serve, "beat")

    first_restart = kill_worker(serve, restart=1, delay=1)
    second_restart = kill_worker(serve, restart=2, delay=2)  # died again soon: a longer wait

    assert serve.make.poll() is None, "the stack is still up"
    assert (pids(serve, "gunicorn"), pids(serve, "beat")) == (gunicorn, beat), "the others were not restarted"
    assert group_alive(gunicorn[0]) and group_alive(beat[0]) and not group_alive(first_restart)
    assert client.get("/healthz").json()["checks"] == {"database": "ok", "broker": "ok"}
    # The restarted worker runs the background work.
    _, key = api_key_create(tenant_name="serve-restart")
    auth = {"Authorization": f"Bearer {key}", **HTTPS}
    assert (
        client.post("/api/v1/conversations/", json={"id": "r", "settings": SMALL}, headers=auth).status_code
        == 201
    )
    fill_to(
        Timeline.objects.get(conversation__public_id="r", conversation__tenant__name="serve-restart"), 4_600
    )
    queued = client.post("/api/v1/conversations/r/compact/", json={}, headers=auth)
    assert queued.status_code == 202, queued.text
    wait_for_applied_compaction(queued.json()["task_id"], logs=serve.log)

    serve.make.send_signal(signal.SIGTERM)
    assert serve.make.wait(60) != 0
    for pid in (*gunicorn, *beat, second_restart):
        assert not group_alive(pid), f"pid {pid} survived serve.sh\n{serve.log()}"
    assert "== stopped: gunicorn worker beat" in serve.log()


def test_a_process_that_keeps_dying_stops_the_stack(tmp_path):
    script = tmp_path / "flaky.sh"
    script.write_text(
        "set -euo pipefail\n"
        f"cd {ROOT}\n"
        "source scripts/supervise.sh\n"
        "start steady sleep 1000\n"
        "start flaky sh -c 'exit 3'\n"
        "supervise_restarting\n"
    )
    done = subprocess.run(
        ["bash", str(script)],
        env={**os.environ, "RESTART_LIMIT": "2", "RESTART_STABLE_SECONDS": "30", "STOP_TIMEOUT": "5"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 3, out
    assert "restarting it in 1s (restart 1)" in out and "restarting it in 2s (restart 2)" in out
    assert "flaky exited (status 3) again after 2 restarts in a row" in out
    assert "== stopped: steady flaky" in out
    steady = int(re.search(r"== started steady \(pid (\d+)\)", out)[1])
    assert not group_alive(steady)


def test_a_sigterm_during_a_back_off_stops_everything_without_waiting_it_out(tmp_path):
    script = tmp_path / "flaky.sh"
    script.write_text(
        "set -euo pipefail\n"
        f"cd {ROOT}\n"
        "source scripts/supervise.sh\n"
        "start steady sleep 1000\n"
        "start flaky sh -c 'exit 3'\n"
        "supervise_restarting\n"
    )
    log_path = tmp_path / "flaky.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["bash", str(script)],
            env={**os.environ, "STOP_TIMEOUT": "5"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(
            lambda: "restarting it in 8s (restart 4)" in log_path.read_text(),
            timeout=60,
            what="the fourth back-off (8 s)",
            logs=log_path.read_text,
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(5) == 143, "stopped within the back-off's 8 s"
        out = log_path.read_text()
        assert "== terminated: stopping" in out and "== stopped: steady flaky" in out
        steady = int(re.search(r"== started steady \(pid (\d+)\)", out)[1])
        assert not group_alive(steady)
    finally:
        kill_group(process)
