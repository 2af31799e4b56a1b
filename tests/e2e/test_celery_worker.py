"""Background compaction with a real Celery worker on a real Redis against the test PostgreSQL.

The Django side runs with eager mode off and the test Redis as broker; workers are ``celery -A
config worker`` subprocesses. Run by ``make test`` (``scripts/test.sh`` exports ``TEST_REDIS_URL``
and ``DATABASE_URL``); skipped without them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.test import override_settings

from config.celery import app
from tests.e2e.processes import (
    NEEDS_REDIS_AND_POSTGRES,
    REDIS_URL,
    free_port,
    live_database_url,
    wait_for,
    wait_for_applied_compaction,
)
from tests.factories import SMALL, fill_to
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction, Timeline

BASE_DIR = Path(settings.BASE_DIR)
SLOW = "tests.services.compaction.summarizers.SlowSummarizer"

pytestmark = NEEDS_REDIS_AND_POSTGRES


class Worker:
    """One ``celery -A config worker`` process (solo pool: one process, killed for real)."""

    def __init__(self, name: str, log_dir: Path, **env: str):
        self.log_path = log_dir / f"{name}.log"
        full_env = {
            **os.environ,
            "DATABASE_URL": live_database_url(),
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_RESULT_BACKEND": REDIS_URL,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            **env,
        }
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "--pool=solo",
                    "--hostname",
                    f"{name}@%h",
                    "--loglevel=INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ],
                cwd=BASE_DIR,
                env=full_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed as a whole
            )
        wait_for(
            lambda: " ready." in self.log() or self.process.poll() is not None,
            timeout=60,
            what=f"{name} to start",
            logs=self.log,
        )
        assert self.process.poll() is None, f"worker {name} exited:\n{self.log()}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, nothing acknowledged or given back to the broker."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def drop_connection_pools() -> None:
    """Producers made for the previous broker URL must not be reused (Celery caches them)."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker() -> Iterator[str]:
    """The Django side publishes to the test Redis instead of running tasks eagerly."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.delete("celery", "unacked", "unacked_index")
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    with override_settings(
        CELERY_TASK_ALWAYS_EAGER=False, CELERY_BROKER_URL=REDIS_URL, CELERY_RESULT_BACKEND=REDIS_URL
    ):
        app.conf.update(task_always_eager=False, broker_url=REDIS_URL, result_backend=REDIS_URL)
        drop_connection_pools()
        try:
            yield REDIS_URL
        finally:
            app.conf.update(saved)
            drop_connection_pools()
    client.close()


@pytest.fixture
def workers(tmp_path) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(name: str, **env: str) -> Worker:
        worker = Worker(name, tmp_path, **env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def over_threshold_conversation(owner) -> Timeline:
    response = owner.post("/api/v1/conversations/", {"id": "bg", "settings": SMALL})
    assert response.status_code == 201, response.content
    timeline = Timeline.objects.get(conversation__public_id="bg")
    fill_to(timeline, 4_600)  # over 0.9 × 5,000: a manual compaction has work to do
    return timeline


def test_the_compact_endpoint_enqueues_and_a_real_worker_compacts(owner, broker, workers):
    from celery.backends.redis import RedisBackend
    from celery.result import AsyncResult

    timeline = over_threshold_conversation(owner)
    metrics_port = free_port()
    worker = workers("w1", TIMELINE_WORKER_METRICS_PORT=str(metrics_port))
    assert owner.get("/healthz").json()["checks"]["broker"] == "ok"

    response = owner.post("/api/v1/conversations/bg/compact/", {})

    assert response.status_code == 202, response.content
    task_id = response.json()["task_id"]
    wait_for_applied_compaction(task_id, logs=worker.log)
    result = AsyncResult(task_id, backend=RedisBackend(app=app, url=broker)).get(timeout=30)
    assert result["status"] == "applied"
    record = Compaction.objects.get(task_id=task_id)
    assert (record.trigger, record.summarizer) == ("manual", "extractive")
    assert Block.objects.filter(timeline=timeline, type=b.SUMMARY).count() == 1
    rendered = owner.post("/api/v1/conversations/bg/render/", {"format": "text", "debug": True}).json()
    assert "[CONVERSATION SUMMARY]" in rendered["debug"]
    assert rendered["tokens"]["total"] <= SMALL["max_tokens"]
    # A worker on a host of its own exports its compactions itself.
    exported = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    assert 'timeline_compactions_total{status="applied",trigger="manual"} 1.0' in exported
    assert 'timeline_summarizer_duration_seconds_count{summarizer="extractive"} 1.0' in exported


def test_a_worker_killed_mid_summary_has_its_task_redelivered_and_completed_once(owner, broker, workers):
    import redis

    timeline = over_threshold_conversation(owner)
    doomed = workers("doomed", TIMELINE_SUMMARIZER_CLASS=SLOW, TIMELINE_TEST_SLOW_SUMMARY_SECONDS="120")

    task_id = owner.post("/api/v1/conversations/bg/compact/", {}).json()["task_id"]
    wait_for(
        lambda: Compaction.objects.filter(task_id=task_id, status="running").exists(),
        timeout=60,
        what="the first worker to claim the compaction",
        logs=doomed.log,
    )
    time.sleep(0.5)  # well inside the two-minute summary
    doomed.kill()
    assert Compaction.objects.get(task_id=task_id).status == "running", "the dead run's claim is left"

    # Redis hands the unacknowledged task out again once its visibility timeout has passed.
    rescuer = workers("rescuer", CELERY_BROKER_VISIBILITY_TIMEOUT="2", CELERY_BROKER_RESTORE_INTERVAL="1")
    wait_for(
        lambda: Compaction.objects.filter(timeline=timeline, status="applied").exists(),
        timeout=90,
        what="the redelivered task to apply the compaction",
        logs=rescuer.log,
    )
    time.sleep(4)  # two more restore rounds: nothing else comes back

    rows = list(
        Compaction.objects.filter(timeline=timeline).order_by("id").values_list("task_id", "status", "error")
    )
    # The API's compact queued one row that names the compaction (its 202 gave its id): the
    # redelivered task takes that row over from the dead run and finishes it, once.
    assert rows == [(task_id, "applied", "")], rescuer.log()
    assert Block.objects.filter(timeline=timeline, type=b.SUMMARY).count() == 1
    assert redis.Redis.from_url(broker).hlen("unacked") == 0, "the redelivered task was acknowledged"
    assert task_id in rescuer.log()
