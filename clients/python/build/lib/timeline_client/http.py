"""HTTP plumbing of the Python client: one ``httpx.Client``, the bearer key, the error shape, and
retries of what is safe to retry.

A request that could not connect (the service restarting) or that the service answered 503 (a
dependency such as PostgreSQL or Redis unreachable for a moment, ``…_unavailable``) is retried up to
``retries`` times with exponential backoff: ``backoff`` × 2^attempt seconds, at least the answer's
``Retry-After``, never more than ``max_backoff`` per wait. Writes stay safe to repeat when they
carry client ids (blocks with an ``id``, conversations with an ``id``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import httpx


class TimelineAPIError(Exception):
    """A 4xx/5xx answer of the service, with its ``{"error": {code, message, details}}``."""

    def __init__(self, status: int, code: str, message: str, details: Any = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


def retry_delay(attempt: int, *, retry_after: str | None, backoff: float, max_backoff: float) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): exponential, at least a numeric
    ``Retry-After``, capped at ``max_backoff``."""
    delay = float(backoff * 2**attempt)
    if retry_after:
        with contextlib.suppress(ValueError):  # an HTTP date: the exponential delay stands
            delay = max(delay, float(retry_after))
    return max(0.0, min(delay, max_backoff))


class Transport:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        client: httpx.Client | None = None,
        retries: int = 5,
        backoff: float = 0.25,
        max_backoff: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.base_url = base_url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout)
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        attempt = 0
        while True:
            try:
                response = self._client.request(
                    method, f"{self.base_url}{path}", json=json, params=params, headers=self._headers
                )
            except httpx.ConnectError:  # nothing was sent: always safe to send again
                if attempt >= self.retries:
                    raise
                retry_after = None
            else:
                if response.status_code != 503 or attempt >= self.retries:
                    return self._result(response)
                retry_after = response.headers.get("Retry-After")
            self._sleep(
                retry_delay(
                    attempt, retry_after=retry_after, backoff=self.backoff, max_backoff=self.max_backoff
                )
            )
            attempt += 1

    @staticmethod
    def _result(response: httpx.Response) -> Any:
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
            except (ValueError, KeyError, TypeError):
                error = {"code": "http_error", "message": response.text[:500]}
            raise TimelineAPIError(
                response.status_code, error.get("code", ""), error.get("message", ""), error.get("details")
            )
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def close(self) -> None:
        self._client.close()
