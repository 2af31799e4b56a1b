"""Dependency outages for tests: a Redis nobody listens on, PostgreSQL's connection errors."""

from __future__ import annotations

import socket

import psycopg
from django.db import OperationalError


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# A cache whose Redis refuses every connection (the port was free a moment ago).
UNREACHABLE_REDIS = {
    "BACKEND": "django.core.cache.backends.redis.RedisCache",
    "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
    "OPTIONS": {"socket_connect_timeout": 1},
}


def database_down() -> OperationalError:
    """What Django raises when PostgreSQL cannot be reached: psycopg's error has no SQLSTATE."""
    try:
        try:
            raise psycopg.OperationalError(
                'connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused'
            )
        except psycopg.OperationalError as cause:
            raise OperationalError(*cause.args) from cause
    except OperationalError as exc:
        return exc


def database_error(cause: psycopg.Error) -> OperationalError:
    """Django's OperationalError wrapping a PostgreSQL error with a SQLSTATE."""
    try:
        try:
            raise cause
        except psycopg.Error as inner:
            raise OperationalError(*inner.args) from inner
    except OperationalError as exc:
        return exc
