import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from timeline_client import TimelineClient

BASE = "/api/v1/conversations/c1"


def messages_url(context: str = "main") -> str:
    return f"{BASE}/contexts/{context}/messages/"


@pytest.fixture
def in_process_requests():
    """Like Django's test client: the request cycle must not close the test's connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def wsgi_http(in_process_requests):
    """An httpx client that calls the Django app in-process (same test database, no server)."""
    with httpx.Client(
        transport=httpx.WSGITransport(app=in_process_requests), base_url="http://testserver"
    ) as client:
        yield client


@pytest.fixture
def api(owner, wsgi_http) -> TimelineClient:
    return TimelineClient("http://testserver", owner.raw_key, http_client=wsgi_http)
