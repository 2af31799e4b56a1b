"""Issue 20.5: a dependency outage answers 503 with Retry-After in the one error shape, never 500.

PostgreSQL unreachable (a connection refused or dropped) is ``database_unavailable``; a broker that
cannot take a task is ``broker_unavailable``; an unreachable Redis cache does not fail the compact
call at all (the throttle counts in the process meanwhile). Errors that are bugs (a deadlock, a lock
or statement timeout) stay 500. The chaos test (tests/e2e/test_chaos.py) does the same with real
outages."""

from __future__ import annotations

import json

import kombu.exceptions
import psycopg.errors
import pytest
import redis.exceptions
from celery import current_app
from django.contrib.admin import AdminSite
from django.test import Client
from rest_framework.throttling import ScopedRateThrottle

from timeline_app.api import exceptions
from timeline_app.api.auth import ApiKeyAuthentication
from timeline_app.api.exceptions import RETRY_AFTER_SECONDS, dependency_outage
from timeline_app.services.compaction import COMPACT_TASK

from .hostile import C, assert_error
from .outages import UNREACHABLE_REDIS, database_down, database_error

pytestmark = pytest.mark.django_db


def raiser(exc: BaseException):
    def raise_it(*args, **kwargs):
        raise exc

    return raise_it


def assert_unavailable(response, dependency: str) -> None:
    error = assert_error(response, 503)
    assert error["code"] == f"{dependency}_unavailable"
    assert error["details"] == {"dependency": dependency, "retry_after": RETRY_AFTER_SECONDS}
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)


@pytest.mark.parametrize(
    "exc",
    [
        database_down(),
        database_error(psycopg.errors.AdminShutdown("terminating connection due to administrator command")),
        database_error(psycopg.errors.CannotConnectNow("the database system is starting up")),
        database_error(psycopg.errors.TooManyConnections("too many clients already")),
        database_error(psycopg.errors.ConnectionFailure("connection failure")),
    ],
    ids=["refused", "admin-shutdown", "starting-up", "too-many-connections", "connection-failure"],
)
def test_an_unreachable_database_answers_503_with_retry_after(owner, conversation, monkeypatch, exc):
    monkeypatch.setattr(ApiKeyAuthentication, "authenticate", raiser(exc))
    assert_unavailable(owner.get(f"{C}/c1/"), "database")
    assert_unavailable(owner.post(f"{C}/c1/blocks/", {"blocks": []}), "database")


def test_a_connection_lost_mid_request_answers_503(owner, conversation, monkeypatch):
    from django.db import InterfaceError

    monkeypatch.setattr(
        "timeline_app.api.render.timeline_render", raiser(InterfaceError("connection already closed"))
    )
    assert_unavailable(owner.post(f"{C}/c1/render/", {}), "database")


@pytest.mark.parametrize(
    "exc",
    [
        database_error(psycopg.errors.LockNotAvailable("could not obtain lock")),
        database_error(psycopg.errors.DeadlockDetected("deadlock detected")),
        database_error(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")),
        ValueError("a bug"),
    ],
    ids=["lock-timeout", "deadlock", "statement-timeout", "bug"],
)
def test_database_errors_that_are_bugs_stay_500(owner, conversation, monkeypatch, exc):
    monkeypatch.setattr("timeline_app.api.render.timeline_render", raiser(exc))
    owner.client.raise_request_exception = False
    response = owner.post(f"{C}/c1/render/", {})
    assert response.status_code == 500
    assert "Retry-After" not in response


def test_sqlite_errors_are_not_outages():
    import sqlite3

    from django.db import OperationalError

    try:
        raise OperationalError("database is locked") from sqlite3.OperationalError("database is locked")
    except OperationalError as exc:
        assert dependency_outage(exc) is None


def test_a_broker_that_cannot_take_the_task_answers_503(owner, conversation, monkeypatch, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    task = current_app.tasks[COMPACT_TASK]
    refused = kombu.exceptions.OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    monkeypatch.setattr(task, "apply_async", raiser(refused))
    assert_unavailable(owner.post(f"{C}/c1/compact/", {}), "broker")


def test_an_unreachable_cache_costs_the_compact_call_nothing_and_it_is_still_throttled(
    owner, conversation, settings, monkeypatch
):
    # The throttle's shared cache is Redis, and Redis is down: each process counts for itself.
    settings.CACHES = {"default": UNREACHABLE_REDIS}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"compact": "2/min"})
    from timeline_app.api.throttling import FALLBACK_CACHE

    FALLBACK_CACHE.clear()

    statuses = [owner.post(f"{C}/c1/compact/", {"wait": True}).status_code for _ in range(3)]

    assert statuses == [200, 200, 429]


def test_the_throttle_does_not_hide_errors_that_are_not_outages(owner, conversation, monkeypatch):
    from django.core.cache.backends.locmem import LocMemCache

    monkeypatch.setattr(LocMemCache, "add", raiser(TypeError("a bug")))
    monkeypatch.setattr("django.core.cache.backends.db.DatabaseCache.add", raiser(TypeError("a bug")))
    owner.client.raise_request_exception = False
    assert owner.post(f"{C}/c1/compact/", {"wait": True}).status_code == 500


def test_a_redis_error_raised_by_a_view_answers_503(owner, conversation, monkeypatch):
    monkeypatch.setattr(
        "timeline_app.api.render.timeline_render", raiser(redis.exceptions.ConnectionError("refused"))
    )
    assert_unavailable(owner.post(f"{C}/c1/render/", {}), "cache")


@pytest.mark.parametrize("debug", [False, True])
def test_views_outside_drf_answer_503_through_the_middleware(monkeypatch, settings, debug):
    # With DEBUG on the 500 handler is not used: the middleware answers.
    settings.DEBUG = debug
    monkeypatch.setattr(AdminSite, "each_context", raiser(database_down()))
    response = Client(raise_request_exception=False).get("/admin/login/")
    assert_unavailable(response, "database")


@pytest.mark.parametrize(
    ("exc", "dependency"),
    [
        (database_down(), "database"),
        (kombu.exceptions.OperationalError("refused"), "broker"),
        (redis.exceptions.TimeoutError("timeout"), "cache"),
    ],
)
def test_the_drf_exception_handler_answers_an_outage_503(rf, exc, dependency):
    response = exceptions.exception_handler(exc, {"request": rf.post("/api/v1/conversations/")})
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response.data == {
        "error": {
            "code": f"{dependency}_unavailable",
            "message": f"the {dependency} is unreachable; retry after {RETRY_AFTER_SECONDS} s",
            "details": {"dependency": dependency, "retry_after": RETRY_AFTER_SECONDS},
        }
    }


def test_an_outage_raised_outside_any_view_answers_503_from_the_500_handler(rf):
    request = rf.get("/admin/")
    try:
        raise database_down()
    except Exception:
        response = exceptions.json_server_error(request)
    assert response.status_code == 503 and response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert json.loads(response.content)["error"]["code"] == "database_unavailable"
    assert exceptions.json_server_error(request).status_code == 500
