"""Shared assertions of the bad-input tests: the one error shape, and the conversation still answers."""

from __future__ import annotations

from typing import Any

C = "/api/v1/conversations"


def assert_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert isinstance(body["error"]["code"], str) and body["error"]["message"]
    return body["error"]


def assert_still_readable(caller: Any, conv: str) -> None:
    """The conversation, the tenant's list, a render and the export all still answer 200."""
    assert caller.get(f"{C}/{conv}/").status_code == 200
    assert caller.get(f"{C}/").status_code == 200
    assert caller.post(f"{C}/{conv}/render/", {}).status_code == 200
    assert caller.get(f"{C}/{conv}/timeline/").status_code == 200
