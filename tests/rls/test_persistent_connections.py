"""A persistent connection (``CONN_MAX_AGE`` > 0) never carries one request's tenant into the
next: requests of two tenants interleaved on one thread, one connection, as the application role."""

from __future__ import annotations

import pytest
from django.db import connection

from tests import rls_support
from timeline_app.models import Conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def persistent(settings):
    before = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = 600
    yield
    connection.settings_dict["CONN_MAX_AGE"] = before


def test_interleaved_tenants_on_one_connection_each_see_their_own(
    two_tenants, app_role, persistent, anonymous
):
    mine, theirs = two_tenants.mine, two_tenants.other_tenant
    backend_pid = connection.connection.info.backend_pid
    for side in (mine, theirs, mine, theirs):
        for path in ("", "messages/", "sources/", "timeline/"):
            response = side.caller.get(f"{side.url}{path}")
            assert response.status_code == 200, response.content
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert side.marker.encode() in body
            other = theirs if side is mine else mine
            assert other.marker.encode() not in body
            # Closed response: nothing left on the connection for the next request.
            assert rls_support.current_settings() == ("", "", "")
            assert Conversation.objects.count() == 0
        # Listing: the caller's conversations only.
        listed = sorted(c["id"] for c in side.caller.get("/api/v1/conversations/").json()["results"])
        assert listed == (["c1", "c2"] if side is mine else ["c1"])
        assert rls_support.current_settings() == ("", "", "")
    # A request without a key and one with a wrong key, after the others: nothing carried over.
    assert anonymous.get(f"{mine.url}").status_code == 401
    assert Conversation.objects.count() == 0
    assert connection.connection.info.backend_pid == backend_pid  # one connection throughout
