"""Unknown /api/ URLs answer the JSON error shape, with DEBUG on or off (issue 12, point 13)."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db

URLS = ["/api/", "/api/nope", "/api/v1/nope/", "/api/v2/conversations/", "/api/v1/conversations/c1/nothing/"]


@pytest.mark.parametrize("debug", [False, True], ids=["debug off", "debug on"])
@pytest.mark.parametrize("url", URLS)
def test_unknown_api_url_is_a_json_404(client, owner, url, debug):
    with override_settings(DEBUG=debug):
        response = owner.client.get(url)
        posted = owner.client.post(url, {}, format="json")
    for answer in (response, posted):
        assert answer.status_code == 404
        assert answer["Content-Type"] == "application/json"
        assert answer.json() == {"error": {"code": "not_found", "message": "no such resource", "details": {}}}


@pytest.mark.parametrize("debug", [False, True], ids=["debug off", "debug on"])
def test_unknown_page_outside_the_api_stays_html(client, debug):
    with override_settings(DEBUG=debug):
        response = client.get("/not-the-api/")
    assert response.status_code == 404
    assert "application/json" not in response["Content-Type"]


WRITES = ["post", "put", "patch", "delete"]


def _csrf_checking_client(raw_key: str | None):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)  # what a real request meets: the middleware's check
    if raw_key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


@pytest.mark.parametrize("with_key", [True, False], ids=["with key", "without key"])
@pytest.mark.parametrize("method", WRITES)
@pytest.mark.parametrize("url", URLS)
def test_a_write_to_an_unknown_api_url_is_a_json_404_not_the_csrf_page(owner, url, method, with_key):
    """Issue 20, point 9: a non-GET request there answered Django's HTML 403 CSRF failure page."""
    client = _csrf_checking_client(owner.raw_key if with_key else None)
    response = getattr(client, method)(url, {"a": 1}, format="json")
    assert response.status_code == 404, response.content[:300]
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": {"code": "not_found", "message": "no such resource", "details": {}}}


def test_the_admin_still_refuses_a_post_without_the_csrf_token(admin_user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post("/admin/logout/", {})
    assert response.status_code == 403
    assert b"CSRF" in response.content
    assert client.get("/admin/").status_code == 200  # still logged in: the POST did nothing
