"""HTTP plumbing of the Python client: one ``httpx.Client`` bound to the service's URL, the bearer
key, the errors, and retries of what is safe to retry.

A request that could not connect (the service restarting) or that the service answered 503 (a
dependency such as PostgreSQL or Redis unreachable for a moment, ``…_unavailable``) is retried up to
``retries`` times with exponential backoff: ``backoff`` × 2^attempt seconds, at least the answer's
``Retry-After``, never more than ``max_backoff`` per wait. Writes stay safe to repeat when they
carry client ids (blocks with an ``id``, conversations with an ``id``).

Errors: every failure is a :class:`TimelineError`. A 4xx/5xx answer is a
:class:`TimelineAPIError`; a request that got no answer (no connection after the retries, a
timeout, a connection dropped mid-request) is a :class:`TimelineUnavailable`, with the httpx
error as its ``__cause__``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import httpx

T = TypeVar("T")


class TimelineError(Exception):
    """Every error of the client: catch this to handle whatever went wrong with a call."""


class TimelineAPIError(TimelineError):
    """A 4xx/5xx answer of the service, with its ``{"error": {code, message, details}}``."""

    def __init__(self, status: int, code: str, message: str, details: Any = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}


class TimelineUnavailable(TimelineError):
    """The service gave no answer: the connection could not be made (after the retries), or the
    request timed out or broke off. ``reason`` is the transport's own message; ``maybe_processed``
    is False when the request surely never reached the service (nothing was sent), True when it
    may have been processed (repeat a write only when it is safe to, e.g. blocks with ids)."""

    def __init__(self, message: str, *, reason: str, maybe_processed: bool):
        super().__init__(message)
        self.reason = reason
        self.maybe_processed = maybe_processed


def retry_delay(attempt: int, *, retry_after: str | None, backoff: float, max_backoff: float) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): exponential, at least a numeric
    ``Retry-After``, capped at ``max_backoff``."""
    delay = float(backoff * 2**attempt)
    if retry_after:
        with contextlib.suppress(ValueError):  # an HTTP date: the exponential delay stands
            delay = max(delay, float(retry_after))
    return max(0.0, min(delay, max_backoff))


def _unavailable(exc: httpx.TransportError, base_url: str, method: str, attempts: int) -> TimelineUnavailable:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        return TimelineUnavailable(
            f"the timeline service at {base_url} could not be reached{tries}: {reason}",
            reason=reason,
            maybe_processed=False,
        )
    return TimelineUnavailable(
        f"{method} {exc.request.url} got no answer ({type(exc).__name__}: {reason}); the service may have "
        "processed it",
        reason=reason,
        maybe_processed=True,
    )


class Transport:
    """The one ``httpx.Client`` of a client object, bound to ``base_url`` (paths are relative to
    it). ``client`` lets the caller bring its own (a mock transport, a proxy): it is used as it is,
    and its ``base_url`` is set to ``base_url`` when it has none."""

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
        if client is None:
            client = httpx.Client(base_url=self.base_url, timeout=timeout)
        elif not str(client.base_url):
            client.base_url = httpx.URL(self.base_url)
        elif str(client.base_url).rstrip("/") != self.base_url:
            raise ValueError(f"the http client's base_url is {client.base_url}, not {self.base_url}")
        self._client = client
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> object:
        """The decoded JSON answer (None for an empty one); raises a :class:`TimelineError`."""
        attempt = 0
        while True:
            try:
                response = self._client.request(method, path, json=json, params=params, headers=self._headers)
            except httpx.ConnectError as exc:  # nothing was sent: always safe to send again
                if attempt >= self.retries:
                    raise _unavailable(exc, self.base_url, method, attempt + 1) from exc
                retry_after = None
            except httpx.TransportError as exc:  # a timeout, a dropped connection: not repeated
                raise _unavailable(exc, self.base_url, method, attempt + 1) from exc
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

    def call(
        self,
        answer: type[T],
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> T:
        """:meth:`request`, its answer typed as ``answer`` (a ``TypedDict`` of
        ``timeline_client.types``, which the service's OpenAPI schema defines)."""
        # The one place decoded JSON gets a type: the shapes are the server's contract, which
        # tests/client/test_answer_types.py checks against the schema.
        return cast(T, self.request(method, path, json=json, params=params))

    @staticmethod
    def _result(response: httpx.Response) -> object:
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
        decoded: object = response.json()
        return decoded

    def close(self) -> None:
        self._client.close()
