"""Issue 12.15: the compact throttle counts per key across processes, in a shared cache (Redis when
configured, the database cache otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.db import connection

from config.settings import CACHE_TABLE, cache_config
from timeline_app.api.throttling import SharedScopedRateThrottle

from .hostile import C, assert_error, assert_still_readable

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def request_of(key_pk: int) -> SimpleNamespace:
    return SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=key_pk), META={})


class CompactLikeView:
    throttle_scope = "compact"


def allowed(cache, key_pk: int, calls: int, rate: str, *, now: float | None = None) -> int:
    """``calls`` throttle checks through a throttle bound to ``cache``; how many were allowed.
    ``now`` pins the throttle's clock (one fixed window, whenever the checks run)."""
    passed = 0
    for _ in range(calls):
        throttle = SharedScopedRateThrottle()
        throttle.cache = cache
        if now is not None:
            throttle.timer = lambda: now
        throttle.THROTTLE_RATES = {"compact": rate}
        passed += throttle.allow_request(request_of(key_pk), CompactLikeView())
    return passed


def test_the_default_cache_is_shared_redis_with_a_url_and_the_database_cache_without():
    assert (
        cache_config("redis://127.0.0.1:6379/1")["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    )
    assert cache_config("") == {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": CACHE_TABLE,
    }
    assert CACHE_TABLE in connection.introspection.table_names(), "migrate creates the cache table"


def test_two_cache_clients_share_one_count_per_key():
    first, second = caches.create_connection("default"), caches.create_connection("default")
    assert first is not second
    assert allowed(first, 1, 20, "30/min") == 20
    assert allowed(second, 1, 20, "30/min") == 10, "the second client sees the first one's 20"
    assert allowed(second, 2, 5, "30/min") == 5, "another key counts on its own"


@pytest.mark.skipif(not os.environ.get("TEST_REDIS_URL"), reason="make test provides a Redis")
def test_separate_processes_share_the_count_through_redis():
    script = textwrap.dedent(
        """
        import django, sys
        django.setup()
        from django.core.cache import cache
        from tests.api.test_compact_throttle import allowed
        print(allowed(cache, 77, int(sys.argv[1]), "30/min", now=float(sys.argv[2])))
        """
    )
    env = {
        **os.environ,
        "CACHE_URL": os.environ["TEST_REDIS_URL"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.core.cache import cache; cache.clear()",
        ],
        env=env,
        cwd=ROOT,
        check=True,
    )
    # One pinned clock for all four: on a loaded machine their start-ups can straddle a minute
    # boundary, and a new window would rightly start a new count (the test was flaky that way).
    now = str(time.time())
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script, "50", now], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    passed = [int(worker.communicate(timeout=120)[0].strip()) for worker in workers]
    assert sum(passed) == 30, passed


def test_compact_over_the_rate_is_a_429_in_the_error_shape(owner, conversation, settings):
    SharedScopedRateThrottle.THROTTLE_RATES = {"compact": "2/min"}
    try:
        codes = [owner.post(f"{C}/c1/compact/", {"wait": True}).status_code for _ in range(2)]
        error = assert_error(owner.post(f"{C}/c1/compact/", {"wait": True}), 429)
    finally:
        del SharedScopedRateThrottle.THROTTLE_RATES
    assert codes == [200, 200]
    assert error["code"] == "throttled"
    assert_still_readable(owner, "c1")
