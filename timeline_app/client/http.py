"""HTTP plumbing of the Python client: one ``httpx.Client``, the bearer key, the error shape."""

from __future__ import annotations

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


class Transport:
    def __init__(
        self, base_url: str, api_key: str, *, timeout: float = 60.0, client: httpx.Client | None = None
    ):
        self.base_url = base_url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout)
        self._headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        response = self._client.request(
            method, f"{self.base_url}{path}", json=json, params=params, headers=self._headers
        )
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
