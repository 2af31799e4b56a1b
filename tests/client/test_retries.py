"""Issue 20.5: the Python client retries a 503 (a dependency of the service down for a moment) and a
connection that could not be made, with bounded exponential backoff honoring Retry-After; it does
not retry anything else. Issue 21.7: a request that got no answer is raised as the client's own
``TimelineUnavailable`` (a ``TimelineError``), never as a bare httpx error."""

from __future__ import annotations

import httpx
import pytest
from timeline_client import TimelineClient
from timeline_client.http import TimelineAPIError, TimelineError, TimelineUnavailable, Transport, retry_delay

UNAVAILABLE = {"error": {"code": "database_unavailable", "message": "retry", "details": {}}}


def transport(answers: list, **kwargs) -> tuple[Transport, list[float], list[httpx.Request]]:
    sent: list[httpx.Request] = []
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return Transport("http://t", "k", client=client, sleep=slept.append, **kwargs), slept, sent


def unavailable(retry_after: str | None = "2") -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(503, json=UNAVAILABLE, headers=headers)


def test_a_503_is_retried_after_retry_after_until_it_succeeds():
    t, slept, sent = transport([unavailable("2"), unavailable("2"), httpx.Response(201, json={"ok": 1})])

    assert t.request("POST", "/api/v1/x/", json={"blocks": []}) == {"ok": 1}
    assert slept == [2.0, 2.0]
    assert len(sent) == 3 and {r.content for r in sent} == {b'{"blocks":[]}'}


def test_the_backoff_grows_exponentially_and_is_capped():
    answers = [unavailable(None)] * 6 + [httpx.Response(200, json={})]
    t, slept, _ = transport(answers, retries=6, max_backoff=3.0)

    t.request("GET", "/api/v1/x/")

    assert slept == [0.25, 0.5, 1.0, 2.0, 3.0, 3.0]


def test_a_huge_retry_after_is_capped():
    t, slept, _ = transport([unavailable("3600"), httpx.Response(200, json={})], max_backoff=10.0)
    t.request("GET", "/api/v1/x/")
    assert slept == [10.0]


def test_after_the_last_retry_the_503_is_raised():
    t, slept, sent = transport([unavailable()] * 3, retries=2)

    with pytest.raises(TimelineAPIError) as raised:
        t.request("GET", "/api/v1/x/")

    assert raised.value.status == 503 and raised.value.code == "database_unavailable"
    assert len(sent) == 3 and len(slept) == 2


def test_a_refused_connection_is_retried():
    t, slept, _ = transport([httpx.ConnectError("refused"), httpx.Response(200, json={"ok": 1})])
    assert t.request("GET", "/api/v1/x/") == {"ok": 1}
    assert slept == [0.25]


def test_a_refused_connection_is_raised_as_timeline_unavailable_after_the_last_retry():
    t, _, sent = transport([httpx.ConnectError("refused")] * 2, retries=1)
    with pytest.raises(TimelineUnavailable) as raised:
        t.request("GET", "/api/v1/x/")
    assert len(sent) == 2
    assert str(raised.value) == "the timeline service at http://t could not be reached (2 attempts): refused"
    assert raised.value.reason == "refused" and raised.value.maybe_processed is False
    assert isinstance(raised.value, TimelineError)
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


@pytest.mark.parametrize("status", [500, 502, 400, 409, 429])
def test_other_errors_are_not_retried(status):
    t, slept, sent = transport([httpx.Response(status, json=UNAVAILABLE)])
    with pytest.raises(TimelineAPIError):
        t.request("POST", "/api/v1/x/", json={})
    assert len(sent) == 1 and slept == []


def test_a_read_timeout_is_not_retried_and_says_the_request_may_have_been_processed():
    # The request may have been processed: only the caller knows whether repeating it is safe.
    t, _, sent = transport([httpx.ReadTimeout("slow")])
    with pytest.raises(TimelineUnavailable) as raised:
        t.request("POST", "/api/v1/x/", json={})
    assert len(sent) == 1
    assert str(raised.value) == (
        "POST http://t/api/v1/x/ got no answer (ReadTimeout: slow); the service may have processed it"
    )
    assert raised.value.maybe_processed is True
    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)


@pytest.mark.parametrize(
    "error",
    [httpx.RemoteProtocolError("dropped"), httpx.WriteError("broken pipe"), httpx.ConnectTimeout("slow")],
)
def test_every_transport_error_is_a_timeline_unavailable(error):
    t, _, sent = transport([error], retries=3)
    with pytest.raises(TimelineUnavailable) as raised:
        t.request("POST", "/api/v1/x/", json={})
    assert len(sent) == 1 and raised.value.__cause__ is error


def test_the_client_raises_timeline_unavailable_when_the_service_cannot_be_reached():
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    api = TimelineClient(
        "http://service", "tlk_x", http_client=httpx.Client(transport=httpx.MockTransport(refused)), retries=0
    )
    with pytest.raises(TimelineError, match="could not be reached: connection refused") as raised:
        api.conversation("c1")
    assert isinstance(raised.value, TimelineUnavailable)


def test_retries_zero_turns_retrying_off():
    t, _, sent = transport([unavailable()], retries=0)
    with pytest.raises(TimelineAPIError):
        t.request("GET", "/api/v1/x/")
    assert len(sent) == 1


def test_an_http_date_retry_after_falls_back_to_the_exponential_delay():
    assert retry_delay(2, retry_after="Wed, 21 Oct 2015 07:28:00 GMT", backoff=0.25, max_backoff=10) == 1.0
