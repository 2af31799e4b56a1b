"""``make serve`` on the test PostgreSQL and Redis: gunicorn, a Celery worker and beat; an API round
trip, a background compaction finished by the real worker, /metrics summed over the processes, and
SIGTERM to make stopping every process it started."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.processes import (
    NEEDS_REDIS_AND_POSTGRES,
    REDIS_URL,
    ROOT,
    free_port,
    group_alive,
    kill_group,
    live_database_url,
    wait_for,
    wait_for_applied_compaction,
)
from tests.factories import SMALL, fill_to
from timeline_app.models import Timeline
from timeline_app.services.api_keys import api_key_create

pytestmark = NEEDS_REDIS_AND_POSTGRES
HTTPS = {"X-Forwarded-Proto": "https"}  # what the TLS proxy in front of gunicorn adds


def serve_env(tmp_path: Path, port: int) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "DJANGO_", "PROMETHEUS_"))},
        "DATABASE_URL": live_database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "TIMELINE_BEHIND_TLS_PROXY": "true",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        "GUNICORN_THREADS": "2",
        "CELERY_WORKER_CONCURRENCY": "1",
        "STATIC_ROOT": str(tmp_path / "static"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
    }


@dataclass
class Served:
    make: subprocess.Popen[bytes]
    base: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def started(self) -> dict[str, int]:
        return {name: int(pid) for name, pid in re.findall(r"== started (\w+) \(pid (\d+)\)", self.log())}


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    import redis

    redis.Redis.from_url(REDIS_URL).delete("celery", "unacked", "unacked_index")
    port = free_port()
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "serve"],
            cwd=ROOT,
            env=serve_env(tmp_path, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = Served(make, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_for(
            lambda: (len(running.started()) == 3 and " ready." in running.log()) or make.poll() is not None,
            timeout=120,
            what="make serve to start gunicorn, the worker and beat",
            logs=running.log,
        )
        assert make.poll() is None, running.log()
        yield running
    finally:
        for pid in running.started().values():
            if group_alive(pid):
                os.killpg(pid, signal.SIGKILL)
        kill_group(make)


def test_make_serve_serves_the_api_and_compacts_on_the_worker_then_stops_everything(served):
    client = httpx.Client(base_url=served.base, timeout=30)
    health = wait_for(
        lambda: (r := client.get("/healthz")).status_code == 200 and r.json(),
        timeout=30,
        what="/healthz",
        logs=served.log,
    )
    assert health["checks"] == {"database": "ok", "broker": "ok"}
    assert client.get("/static/admin/css/base.css", headers=HTTPS).status_code == 200, (
        "static files are collected"
    )
    assert client.get("/api/v1/conversations/").status_code == 301, "plain HTTP is sent to HTTPS"

    _, key = api_key_create(tenant_name="serve")
    auth = {"Authorization": f"Bearer {key}", **HTTPS}
    created = client.post("/api/v1/conversations/", json={"id": "served", "settings": SMALL}, headers=auth)
    assert created.status_code == 201, created.text
    turn = client.post("/api/v1/conversations/served/turns/", json={"prompt": "Plan a trip"}, headers=auth)
    assert turn.status_code == 201, turn.text
    rendered = client.post(
        "/api/v1/conversations/served/render/", json={"format": "text", "debug": True}, headers=auth
    )
    assert "Plan a trip" in rendered.json()["debug"]

    fill_to(Timeline.objects.get(conversation__public_id="served"), 4_600)
    queued = client.post("/api/v1/conversations/served/compact/", json={}, headers=auth)
    assert queued.status_code == 202, queued.text
    task_id = queued.json()["task_id"]
    wait_for_applied_compaction(task_id, logs=served.log)
    after = client.post(
        "/api/v1/conversations/served/render/", json={"format": "text", "debug": True}, headers=auth
    ).json()
    assert "[CONVERSATION SUMMARY]" in after["debug"] and after["compaction"] is None

    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(client.get("/metrics").text)
        for s in family.samples
    }
    applied = ("timeline_compactions_total", (("status", "applied"), ("trigger", "manual")))
    assert samples.get(applied) == 1, "the worker's compaction shows in gunicorn's /metrics"
    assert samples[("timeline_render_duration_seconds_count", ())] >= 2

    started = served.started()
    assert set(started) == {"gunicorn", "worker", "beat"}
    served.make.send_signal(signal.SIGTERM)
    assert served.make.wait(60) != 0
    for name, pid in started.items():
        assert not group_alive(pid), f"{name} (pid {pid}) survived make serve\n{served.log()}"
    assert "== stopped: gunicorn worker beat" in served.log()


@pytest.mark.parametrize(
    ("unset", "named"),
    [
        ("SECRET_KEY", "SECRET_KEY"),
        ("DATABASE_URL", "DATABASE_URL"),
        ("CELERY_BROKER_URL", "CELERY_BROKER_URL"),
    ],
)
def test_make_serve_refuses_to_start_without_its_components(tmp_path, unset, named):
    env = serve_env(tmp_path, free_port())
    del env[unset]

    result = subprocess.run(["make", "serve"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert result.returncode != 0
    assert named in result.stderr and "make serve needs" in result.stderr
    assert not (tmp_path / "static").exists(), "nothing was started"
