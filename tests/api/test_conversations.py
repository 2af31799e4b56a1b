import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timeline_app.models import Conversation, Timeline

pytestmark = pytest.mark.django_db

# Key lookup, conversation, its main context, its window row, its context names.
DETAIL_QUERIES = 5


def test_healthz_answers_ok_without_a_key(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"


def test_create_conversation_returns_its_public_fields(owner):
    response = owner.post(
        "/api/v1/conversations/", {"id": "chat-1", "title": "Hello", "settings": {"max_tokens": 50_000}}
    )
    assert response.status_code == 201
    body = response.json()
    assert body["id"] == "chat-1" and body["title"] == "Hello"
    assert body["settings"] == {"max_tokens": 50_000}
    assert set(body) == {"id", "title", "started_at", "settings"}
    assert Timeline.objects.filter(conversation__public_id="chat-1", name="main").exists()


def test_create_conversation_without_id_generates_one(owner):
    response = owner.post("/api/v1/conversations/", {})
    assert response.status_code == 201
    assert response.json()["id"].startswith("conv_")


def test_taken_id_is_a_conflict(owner, conversation):
    response = owner.post("/api/v1/conversations/", {"id": conversation.public_id})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


@pytest.mark.parametrize(
    "settings, field",
    [
        ({"nope": 1}, "nope"),
        ({"max_tokens": "big"}, "max_tokens"),
        ({"threshold": 3}, "threshold"),
        ({"max_tokens": -5}, "max_tokens"),
    ],
)
def test_bad_settings_are_rejected_and_nothing_is_created(owner, settings, field):
    response = owner.post("/api/v1/conversations/", {"id": "bad", "settings": settings})
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]["settings"]
    assert not Conversation.objects.filter(public_id="bad").exists()


def test_list_shows_only_the_callers_conversations(owner, outsider, conversation):
    outsider.post("/api/v1/conversations/", {"id": "theirs"})
    ids = [c["id"] for c in owner.get("/api/v1/conversations/").json()["results"]]
    assert ids == ["c1"]


def test_list_is_paginated_by_cursor(owner):
    for number in range(5):
        owner.post("/api/v1/conversations/", {"id": f"p{number}"})
    first = owner.get("/api/v1/conversations/", limit=2).json()
    assert [c["id"] for c in first["results"]] == ["p4", "p3"]
    second = owner.client.get(first["next"]).json()
    assert [c["id"] for c in second["results"]] == ["p2", "p1"]


def test_detail_counts_blocks_tokens_and_contexts(owner, conversation):
    owner.post("/api/v1/conversations/c1/blocks/", {"blocks": [{"type": "react.notes", "text": "hello"}]})
    body = owner.get("/api/v1/conversations/c1/").json()
    assert body["block_count"] == 1
    assert body["visible_tokens"] > 0
    assert body["contexts"] == ["main"]


@pytest.mark.parametrize("url", ["/api/v1/conversations/", "/api/v1/conversations/c1/"])
def test_missing_or_wrong_key_is_401(anonymous, client, conversation, url):
    assert anonymous.get(url).status_code == 401
    wrong = client.get(url, HTTP_AUTHORIZATION="Bearer tlk_wrong")
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "unauthenticated"


def test_another_tenants_conversation_is_404(outsider, conversation):
    response = outsider.get("/api/v1/conversations/c1/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert outsider.post("/api/v1/conversations/c1/blocks/", {"blocks": [{"type": "x"}]}).status_code == 404


def test_revoked_key_is_401(owner, conversation):
    from timeline_app.services.api_keys import api_key_revoke

    api_key_revoke(prefix=owner.raw_key)
    assert owner.get("/api/v1/conversations/").status_code == 401


def test_unknown_api_path_is_a_json_404(owner):
    response = owner.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 201}, {"limit": "x"}, {"cursor": "abc"}, {"cursor": 0}, {"cursor": 2**63}],
)
def test_list_rejects_a_bad_cursor_or_limit(owner, params):
    response = owner.get("/api/v1/conversations/", **params)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_next_page_link_keeps_the_page_size_and_ends_with_null(owner):
    for number in range(3):
        owner.post("/api/v1/conversations/", {"id": f"n{number}"})
    first = owner.get("/api/v1/conversations/", limit=2).json()
    assert first["next"].startswith("http://testserver/api/v1/conversations/?cursor=")
    assert first["next"].endswith("&limit=2")
    last = owner.client.get(first["next"]).json()
    assert [c["id"] for c in last["results"]] == ["n0"] and last["next"] is None


def test_detail_reads_the_window_in_a_fixed_number_of_queries(owner, conversation):
    """Block count and visible tokens come from one annotated row (``selectors.timeline_window``),
    however many blocks and contexts the conversation has."""
    owner.post("/api/v1/conversations/c1/blocks/", {"blocks": [{"type": "react.notes", "text": "a"}]})
    owner.get("/api/v1/conversations/c1/")  # warm up
    with CaptureQueriesContext(connection) as few:
        assert owner.get("/api/v1/conversations/c1/").status_code == 200
    blocks = [{"type": "react.notes", "text": f"note {n}"} for n in range(40)]
    owner.post("/api/v1/conversations/c1/blocks/", {"blocks": blocks})
    for name in ("a", "b", "c"):
        owner.post("/api/v1/conversations/c1/contexts/", {"name": name})
    with CaptureQueriesContext(connection) as many:
        body = owner.get("/api/v1/conversations/c1/").json()
    assert body["block_count"] == 41 and len(body["contexts"]) == 4
    assert len(many.captured_queries) == len(few.captured_queries) == DETAIL_QUERIES
