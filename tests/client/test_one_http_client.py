"""Issue 21.7: a client object holds one ``httpx.Client`` bound to the service's URL; every call
sends a path relative to it."""

from __future__ import annotations

import httpx
import pytest
from timeline_client import TimelineClient


def test_the_client_makes_one_httpx_client_bound_to_the_base_url(monkeypatch):
    seen: list[str] = []
    made: list[httpx.Client] = []
    real_client = httpx.Client

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"results": [], "next": None})

    def make(**kwargs) -> httpx.Client:
        made.append(real_client(transport=httpx.MockTransport(answer), **kwargs))
        return made[-1]

    monkeypatch.setattr(httpx, "Client", make)
    api = TimelineClient("https://svc.example/timeline/", "tlk_x")
    assert list(api.conversations()) == []
    list(api.tenant_usage(since="2026-01-01"))

    assert len(made) == 1
    assert str(made[0].base_url) == "https://svc.example/timeline/"
    assert seen == [
        "https://svc.example/timeline/api/v1/conversations/",
        "https://svc.example/timeline/api/v1/usage/?since=2026-01-01",
    ]


def test_a_given_http_client_without_base_url_is_bound_to_it():
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": "c1", "url": str(request.url)})

    given = httpx.Client(transport=httpx.MockTransport(answer))
    api = TimelineClient("http://service/prefix", "tlk_x", http_client=given)
    assert api.transport._client is given
    assert api.conversation("c1")["url"] == "http://service/prefix/api/v1/conversations/c1/"


def test_a_given_http_client_bound_elsewhere_is_refused():
    with pytest.raises(ValueError, match="base_url is http://other, not http://service"):
        TimelineClient("http://service", "tlk_x", http_client=httpx.Client(base_url="http://other"))
