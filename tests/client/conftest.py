import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from timeline_client import TimelineClient


@pytest.fixture
def wsgi_http():
    """An httpx client that calls the Django app in-process (same test database, no server).

    Like Django's test client, it keeps the request cycle from closing the test's connection.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield httpx.Client(
            transport=httpx.WSGITransport(app=get_wsgi_application()), base_url="http://testserver"
        )
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def api(owner, wsgi_http) -> TimelineClient:
    return TimelineClient("http://testserver", owner.raw_key, http_client=wsgi_http)
