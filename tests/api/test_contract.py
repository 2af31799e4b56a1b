"""The whole contract, table-driven: bad input on every write endpoint, tenants on every endpoint."""

from __future__ import annotations

import base64

import pytest
from django.test import override_settings

from timeline_app.models import Block, Compaction, Conversation, Source, Timeline

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"
B64 = base64.b64encode(b"hello").decode()


def state() -> tuple:
    return (
        list(Conversation.objects.order_by("id").values_list("public_id", "title", "settings")),
        list(
            Timeline.objects.order_by("id").values_list(
                "name", "next_seq", "view_start_seq", "cache_last_touch_at"
            )
        ),
        list(Block.objects.order_by("id").values_list("seq", "type", "text", "hidden", "replacement_text")),
        list(Source.objects.order_by("id").values_list("sid", "url", "title", "text")),
        Compaction.objects.count(),
    )


@pytest.fixture
def seeded(owner, conversation):
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_1", "prompt": "hello"})
    owner.post(f"{C}/c1/sources/", {"sources": [{"url": "https://a.example", "title": "A"}]})
    return conversation


WRITES: list[tuple[str, str, object]] = [
    # (endpoint, case, body) — body bytes are sent raw, objects as JSON
    ("/", "malformed json", b'{"id": '),
    ("/", "wrong type", {"title": 5}),
    ("/", "unknown field", {"owner": "me"}),
    ("/", "bad id", {"id": "has space"}),
    ("/", "reserved id", {"id": "import"}),
    ("/", "bad settings key", {"settings": {"max_tokenz": 5}}),
    ("/", "bad settings type", {"settings": {"max_tokens": "many"}}),
    ("/", "absurd max_tokens", {"settings": {"max_tokens": 10**12}}),
    ("/", "negative max_tokens", {"settings": {"max_tokens": -1}}),
    ("/c1/blocks/", "malformed json", b"{"),
    ("/c1/blocks/", "missing type", {"blocks": [{"text": "x"}]}),
    ("/c1/blocks/", "invalid base64", {"blocks": [{"type": "x", "base64": "***"}]}),
    ("/c1/blocks/", "unknown field", {"blocks": [{"type": "x", "extra": 1}]}),
    ("/c1/blocks/", "bad path", {"blocks": [{"type": "x", "path": "zz:1"}]}),
    ("/c1/turns/", "malformed json", b"nope"),
    ("/c1/turns/", "missing prompt", {"turn_id": "turn_2"}),
    ("/c1/turns/", "prompt not a string", {"prompt": ["x"]}),
    ("/c1/turns/", "bad turn id", {"prompt": "x", "turn_id": "no spaces allowed"}),
    ("/c1/turns/", "attachment without mime", {"prompt": "x", "attachments": [{"name": "a"}]}),
    (
        "/c1/turns/",
        "attachment invalid base64",
        {"prompt": "x", "attachments": [{"name": "a", "mime": "image/png", "base64": "%%"}]},
    ),
    (
        "/c1/turns/",
        "attachment name with slash",
        {"prompt": "x", "attachments": [{"name": "../a", "mime": "text/plain"}]},
    ),
    (
        "/c1/turns/",
        "duplicate attachment names",
        {"prompt": "x", "attachments": [{"name": "a", "mime": "text/plain"}] * 2},
    ),
    ("/c1/render/", "malformed json", b"[}"),
    ("/c1/render/", "unknown format", {"format": "yaml"}),
    ("/c1/render/", "negative max_tokens", {"max_tokens": -5}),
    ("/c1/render/", "absurd max_tokens", {"max_tokens": 10**10}),
    ("/c1/render/", "wrong type", {"include_sources": 1}),
    ("/c1/render/", "unknown field", {"fast": True}),
    ("/c1/compact/", "wrong type", {"force": "true"}),
    ("/c1/compact/", "unknown field", {"now": True}),
    ("/c1/hide/", "missing replacement", {"path": "ar:turn_1.user.prompt"}),
    ("/c1/hide/", "unknown path", {"path": "tc:turn_9.tc_9.result", "replacement_text": "x"}),
    ("/c1/hide/", "bad path", {"path": "bad path", "replacement_text": "x"}),
    ("/c1/sources/", "empty list", {"sources": []}),
    ("/c1/sources/", "missing url", {"sources": [{"title": "t"}]}),
    ("/c1/sources/", "duplicate url", {"sources": [{"url": "u"}, {"url": "u"}]}),
    ("/c1/sources/", "wrong type", {"sources": [{"url": 5}]}),
    ("/import/", "malformed json", b"{]"),
    ("/import/", "wrong version", {"version": 2, "blocks": []}),
    ("/import/", "version as string", {"version": "1", "blocks": []}),
    ("/import/", "blocks not a list", {"version": 1, "blocks": {}}),
    (
        "/import/",
        "duplicate seq",
        {"version": 1, "blocks": [{"seq": 1, "type": "x"}, {"seq": 1, "type": "y"}]},
    ),
    (
        "/import/",
        "summary seq not a summary",
        {
            "version": 1,
            "blocks": [{"seq": 1, "type": "x"}],
            "compactions": [{"summary_seq": 1, "first_retained_seq": 1}],
        },
    ),
    ("/import/", "bad settings", {"version": 1, "blocks": [], "settings": {"nope": 1}}),
    ("/c1/contexts/attempt_a/blocks/", "invalid base64", {"blocks": [{"type": "x", "base64": "!"}]}),
    ("/missing/blocks/", "unknown conversation", {"blocks": [{"type": "x"}]}),
    ("/missing/render/", "unknown conversation", {}),
    ("/c1/contexts/nothere/render/", "unknown context", {}),
    ("/c1/contexts/Bad-Name/blocks/", "bad context name", {"blocks": [{"type": "x"}]}),
]


@pytest.mark.parametrize("endpoint, case, body", WRITES, ids=[f"{e} {c}" for e, c, _ in WRITES])
def test_bad_input_gets_a_4xx_json_error_and_changes_nothing(owner, seeded, endpoint, case, body):
    before = state()
    url = f"{C}{endpoint}"
    response = owner.post_raw(url, body) if isinstance(body, bytes) else owner.post(url, body)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"} and error["code"] and error["message"]
    assert state() == before


@override_settings(TIMELINE_MAX_BLOCK_TEXT_CHARS=50, TIMELINE_MAX_ATTACHMENT_BYTES=4)
@pytest.mark.parametrize(
    "endpoint, body",
    [
        ("/c1/blocks/", {"blocks": [{"type": "x", "text": "y" * 51}]}),
        ("/c1/blocks/", {"blocks": [{"type": "x", "base64": B64}]}),
        ("/c1/turns/", {"prompt": "y" * 51}),
        ("/c1/turns/", {"prompt": "x", "attachments": [{"name": "a", "mime": "image/png", "base64": B64}]}),
        (
            "/c1/turns/",
            {"prompt": "x", "attachments": [{"name": "a", "mime": "text/plain", "text": "y" * 51}]},
        ),
    ],
)
def test_oversize_text_and_attachments_are_rejected(owner, seeded, endpoint, body):
    before = state()
    response = owner.post(f"{C}{endpoint}", body)
    assert response.status_code == 400
    assert state() == before


ENDPOINTS = [
    ("get", "/c1/", None),
    ("post", "/c1/blocks/", {"blocks": [{"type": "x"}]}),
    ("get", "/c1/blocks/?path=ar:turn_1.user.prompt", None),
    ("post", "/c1/turns/", {"prompt": "x"}),
    ("post", "/c1/render/", {}),
    ("post", "/c1/compact/", {"wait": True}),
    ("post", "/c1/hide/", {"path": "ar:turn_1.user.prompt", "replacement_text": "x"}),
    ("get", "/c1/search/?q=hello", None),
    ("get", "/c1/sources/", None),
    ("post", "/c1/sources/", {"sources": [{"url": "https://b.example"}]}),
    ("get", "/c1/timeline/", None),
    ("post", "/c1/contexts/main/render/", {}),
    (
        "post",
        "/c1/replies/",
        {"response": {"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "Done."}]}},
    ),
]


def call(caller, method, endpoint, body):
    url = f"{C}{endpoint}"
    return caller.get(url) if method == "get" else caller.post(url, body)


@pytest.mark.parametrize("method, endpoint, body", ENDPOINTS, ids=[f"{m} {e}" for m, e, _ in ENDPOINTS])
def test_every_endpoint_is_tenant_scoped(owner, outsider, anonymous, seeded, method, endpoint, body):
    before = state()
    assert call(anonymous, method, endpoint, body).status_code == 401
    other = call(outsider, method, endpoint, body)
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    assert state() == before
    assert call(owner, method, endpoint, body).status_code in (200, 201)


def test_collection_endpoints_need_a_key(anonymous, seeded):
    assert anonymous.get(f"{C}/").status_code == 401
    assert anonymous.post(f"{C}/", {}).status_code == 401
    assert anonymous.post(f"{C}/import/", {"version": 1, "blocks": []}).status_code == 401


def test_replaying_writes_creates_nothing_new(owner, seeded):
    writes = [
        (
            "/c1/blocks/",
            {
                "blocks": [
                    {"type": "react.notes", "text": "a", "id": "n1"},
                    {"type": "react.notes", "text": "b", "id": "n2"},
                ]
            },
        ),
        (
            "/c1/turns/",
            {
                "turn_id": "turn_2",
                "prompt": "again",
                "attachments": [{"name": "a.txt", "mime": "text/plain", "text": "t"}],
            },
        ),
        (
            "/c1/sources/",
            {"sources": [{"url": "https://a.example", "title": "A"}, {"url": "https://c.example"}]},
        ),
        ("/c1/hide/", {"path": "ar:turn_1.user.prompt", "replacement_text": "[hidden]"}),
    ]
    first = [owner.post(f"{C}{endpoint}", body).json() for endpoint, body in writes]
    after_first = state()
    second = [owner.post(f"{C}{endpoint}", body).json() for endpoint, body in writes]
    assert state() == after_first
    assert second == first


def test_compact_is_throttled(owner, seeded, settings):
    from rest_framework.throttling import ScopedRateThrottle

    # The rates as they were: read after the override below, the settings still say 2/min (the
    # `settings` fixture restores them only after the test), and every later test would keep it.
    before = ScopedRateThrottle.THROTTLE_RATES
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"compact": "2/min"}}
    ScopedRateThrottle.THROTTLE_RATES = {"compact": "2/min"}
    try:
        codes = [owner.post(f"{C}/c1/compact/", {"wait": True}).status_code for _ in range(3)]
    finally:
        ScopedRateThrottle.THROTTLE_RATES = before
    assert codes[:2] == [200, 200] and codes[2] == 429
