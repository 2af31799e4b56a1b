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
