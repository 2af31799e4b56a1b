"""The Redis broker transport (config/broker.py) survives kombu's use-after-close (issue 30,
defect 8): after a broker connection loss, Celery's consumer closes the kombu connection (its
transport's ``client`` becomes ``None``, each channel's pool is dropped), and a delivered task is
then restored on the old channel. Stock kombu 5.7 rebuilds the pool from the closed transport and
fails with ``AttributeError: 'NoneType' object has no attribute 'hostname'`` (the error that
stopped the worker); the project's transport restores the task to its queue. On the test Redis."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import kombu
import pytest

from tests.e2e.processes import REDIS_URL, ROOT

needs_redis = pytest.mark.skipif(not REDIS_URL, reason="needs TEST_REDIS_URL (make test / scripts/test.sh)")
PROJECT = "config.broker:Transport"
STOCK = "redis"


def restore_after_close(transport: str) -> tuple[str, int]:
    """Deliver one message unacknowledged, close the connection the way a connection loss does,
    then restore the message on the old channel. Returns (what happened, queue length after)."""
    import redis

    queue_name = f"broker-test-{secrets.token_hex(4)}"
    connection = kombu.Connection(REDIS_URL, transport=transport)
    channel = connection.channel()
    queue = kombu.Queue(queue_name, channel=channel)
    queue.declare()
    kombu.Producer(channel).publish({"task": "t"}, routing_key=queue_name)
    message = queue.get(no_ack=False)
    assert message is not None and len(channel.qos._delivered) == 1
    channel._disconnect_pools()  # what Channel.close does before its QoS restores
    connection._do_close_transport()  # what Connection.collect() does after a connection loss
    try:
        channel.qos.restore_unacked()
        outcome = "restored"
    except AttributeError as exc:
        outcome = f"AttributeError: {exc}"
        channel.qos._delivered.clear()  # nothing left for kombu's finalizer to trip over
    client = redis.Redis.from_url(REDIS_URL)
    try:
        return outcome, int(client.llen(queue_name))
    finally:
        client.delete(queue_name, "unacked", "unacked_index")
        client.close()


@needs_redis
def test_stock_kombu_fails_to_restore_after_the_transport_closed():
    """The upstream bug this transport works around: when this fails, kombu fixed it, and
    config/broker.py can go."""
    assert restore_after_close(STOCK) == ("AttributeError: 'NoneType' object has no attribute 'hostname'", 0)


@needs_redis
def test_the_projects_transport_restores_the_task_after_the_transport_closed():
    assert restore_after_close(PROJECT) == ("restored", 1)


@pytest.mark.parametrize(
    ("broker", "transport"),
    [
        ("redis://127.0.0.1:6379/0", PROJECT),
        ("rediss://cache.example.org:6380/0", PROJECT),
        ("amqp://guest@127.0.0.1//", "None"),
        ("", "None"),
    ],
)
def test_a_redis_broker_url_selects_the_projects_transport(broker, transport):
    script = "from config.celery import app; print(app.conf.broker_transport)"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "DJANGO_"))}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**env, "CELERY_BROKER_URL": broker, "DATABASE_URL": "sqlite://:memory:", "SECRET_KEY": "x"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == transport
