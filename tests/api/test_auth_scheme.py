"""Only `Authorization: Bearer <key>` authenticates (the scheme word is case-sensitive, as
documented); any other scheme with the same valid key is a 401 that names Bearer."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from timeline_app.services.api_keys import api_key_revoke

pytestmark = pytest.mark.django_db
URL = "/api/v1/conversations/c1/"


def _get(header: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client.get(URL)


def test_bearer_with_the_key_authenticates(owner, conversation):
    assert _get(f"Bearer {owner.raw_key}").status_code == 200


@pytest.mark.parametrize("scheme", ["Token", "Basic", "Key", "ApiKey", "bearer", "BEARER", "Bearerx"])
def test_any_other_scheme_with_a_valid_key_is_401_naming_bearer(owner, conversation, scheme):
    response = _get(f"{scheme} {owner.raw_key}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("header", ["Bearer", "Bearer ", "Bearer not-a-key"])
def test_bearer_without_a_valid_key_is_401(owner, conversation, header):
    response = _get(header)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_the_bare_key_without_a_scheme_is_401(owner, conversation):
    response = _get(owner.raw_key)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_wrong_scheme_error_names_the_expected_header(owner, conversation):
    body = _get(f"Token {owner.raw_key}").json()["error"]
    assert body["message"] == "use 'Authorization: Bearer <api key>'"


def test_two_spaces_after_bearer_still_authenticate(owner, conversation):
    assert _get(f"Bearer  {owner.raw_key}").status_code == 200


def test_unknown_conversation_and_context_errors_name_them(owner, conversation):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {owner.raw_key}")
    missing = client.get("/api/v1/conversations/nope/").json()["error"]
    assert missing["message"] == "conversation 'nope' not found"
    assert missing["details"] == {"conversation": "nope"}
    context = client.get("/api/v1/conversations/c1/contexts/ghost/").json()["error"]
    assert context["message"] == "context 'ghost' not found"
    assert context["details"] == {"context": "ghost"}


def test_an_unknown_or_revoked_key_is_401_saying_so(owner, conversation):
    unknown = _get("Bearer not-a-key").json()["error"]
    assert unknown["message"] == "invalid or revoked API key"
    assert api_key_revoke(prefix=owner.raw_key) == 1
    response = _get(f"Bearer {owner.raw_key}")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "invalid or revoked API key"
