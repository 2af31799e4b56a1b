"""No error page shows a credential: the database password (in DATABASE_URL, in the connection's
parameters), the broker's password, the secret key — not even Django's DEBUG page."""

from __future__ import annotations

import psycopg
import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path

DB_PASSWORD = "S3cret-db-pw!&"
BROKER_PASSWORD = "br0ker-pw-77"
DATABASE_URL = (
    f"postgres://timeline:{DB_PASSWORD.replace('!', '%21').replace('&', '%26')}@127.0.0.1:1/timeline"
)


def database_is_down(request: HttpRequest) -> HttpResponse:
    conninfo = (
        f"host=127.0.0.1 port=1 user=timeline password='{DB_PASSWORD}' dbname=timeline connect_timeout=1"
    )
    params = {"password": DB_PASSWORD, "url": DATABASE_URL}
    psycopg.connect(conninfo)  # refused: the page shows this frame's locals and psycopg's
    return HttpResponse(str(params))


urlpatterns = [path("boom/", database_is_down)]
handler500 = "timeline_app.api.exceptions.json_server_error"


@pytest.fixture
def page(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)

    def fetch(*, debug: bool, accept: str) -> str:
        with override_settings(
            DEBUG=debug,
            ROOT_URLCONF=__name__,
            CELERY_BROKER_URL=f"redis://:{BROKER_PASSWORD}@127.0.0.1:6379/0",
        ):
            client = Client(raise_request_exception=False)
            # runserver copies os.environ into every request's META: DATABASE_URL included.
            response = client.get("/boom/", HTTP_ACCEPT=accept, DATABASE_URL=DATABASE_URL)
        assert response.status_code == 500
        return response.content.decode()

    return fetch


@pytest.mark.parametrize("accept", ["text/html", "text/plain"])
def test_the_debug_error_page_masks_the_database_and_broker_passwords(page, accept):
    body = page(debug=True, accept=accept)

    assert "OperationalError" in body, "this is Django's technical 500 page"
    assert "DATABASE_URL" in body
    for secret in (DB_PASSWORD, "S3cret-db-pw", BROKER_PASSWORD):
        assert secret not in body
    assert "********************" in body


def test_the_production_error_page_is_plain_json(page):
    body = page(debug=False, accept="text/html")

    assert body == '{"error": {"code": "server_error", "message": "internal error", "details": {}}}'
