import httpx
import pytest
from django.core.wsgi import get_wsgi_application

from timeline_app.client import TimelineClient


@pytest.fixture
def wsgi_http():
    """An httpx client that calls the Django app in-process (same test database, no server)."""
    return httpx.Client(
        transport=httpx.WSGITransport(app=get_wsgi_application()), base_url="http://testserver"
    )


@pytest.fixture
def api(owner, wsgi_http) -> TimelineClient:
    return TimelineClient("http://testserver", owner.raw_key, http_client=wsgi_http)
