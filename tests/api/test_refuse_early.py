"""Issue 30, defects 4 and 6: a request is refused before it costs much. A body over what its
endpoint accepts is a 413 unread; a big body whose structure passes a cap (a ``meta`` of 200,000
keys) is a 400 before it is parsed; a chunked body (no Content-Length) is a 411. Nothing is
stored. The time and memory saved are measured by hand and quoted in the commit, not asserted."""

from __future__ import annotations

import io
import json
from unittest import mock

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from timeline_app.api import parsers
from timeline_app.api.base import SMALL_BODY_BYTES, USAGE_BODY_BYTES
from timeline_app.models import Block, RenderUsage

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations/c1"


def post_raw(owner, url: str, body: bytes, **extra):
    return owner.client.post(url, body, content_type="application/json", **extra)


def test_a_meta_of_200000_keys_is_refused_before_it_is_parsed(owner, conversation):
    meta = b"{" + b",".join(b'"key_%010d":0' % i for i in range(200_000)) + b"}"
    body = b'{"blocks":[{"type":"react.notes","text":"x","meta":' + meta + b"}]}"
    with mock.patch.object(parsers.json, "loads", side_effect=AssertionError("parsed")) as loads:
        response = post_raw(owner, f"{C}/blocks/", body)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"] == {"body": "an object holds more than 1064 keys"}
    assert not loads.called
    assert not Block.objects.exists()


def test_a_big_body_within_every_cap_is_parsed_and_stored(owner, conversation):
    """At the caps: five blocks with a meta of 1,000 keys each (a 95 KB body, so scanned)."""
    metas = [{f"key_{n}_{i:04d}": i for i in range(1_000)} for n in range(5)]
    body = {"blocks": [{"type": "react.notes", "text": "x", "meta": meta} for meta in metas]}
    raw = json.dumps(body).encode()
    assert len(raw) > parsers.SCAN_FROM_BYTES
    response = post_raw(owner, f"{C}/blocks/", raw)
    assert response.status_code == 201, response.content[:300]
    assert Block.objects.count() == 5


@pytest.mark.parametrize(
    ("path", "limit"),
    [
        ("renders/rnd_abc/usage/", USAGE_BODY_BYTES),
        ("hide/", SMALL_BODY_BYTES),
        ("compact/", SMALL_BODY_BYTES),
    ],
)
def test_a_body_over_its_endpoints_limit_is_a_413_and_stores_nothing(owner, conversation, path, limit):
    at_limit = b'{"x":"' + b"a" * (limit - 8) + b'"}'
    over = b'{"x":"' + b"a" * (limit - 7) + b'"}'
    assert len(at_limit) == limit and len(over) == limit + 1
    assert post_raw(owner, f"{C}/{path}", at_limit).status_code == 400  # read: an unknown field
    response = post_raw(owner, f"{C}/{path}", over)
    assert response.status_code == 413, response.content[:300]
    assert response.json()["error"] == {
        "code": "too_large",
        "message": f"the request body is over this endpoint's limit of {limit} bytes",
        "details": {"limit_bytes": limit},
    }
    assert not RenderUsage.objects.exists() and not Block.objects.filter(hidden=True).exists()


def test_a_declared_length_over_the_limit_is_refused_without_reading(owner, conversation):
    stream = mock.Mock(read=mock.Mock(side_effect=AssertionError("read")))
    with pytest.raises(Exception) as refused:
        parsers.StrictJSONParser().parse(
            stream,
            parser_context={
                "view": mock.Mock(max_body_bytes=USAGE_BODY_BYTES),
                "request": mock.Mock(META={"CONTENT_LENGTH": str(USAGE_BODY_BYTES + 1)}),
            },
        )
    assert getattr(refused.value, "status", None) == 413
    stream.read.assert_not_called()


def wsgi_post(owner, path: str, body: bytes, headers: dict[str, str]) -> tuple[str, dict]:
    """The request as a WSGI server hands it to Django (no test client in between)."""
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "testserver",
        "CONTENT_TYPE": "application/json",
        "HTTP_AUTHORIZATION": f"Bearer {owner.raw_key}",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        **headers,
    }
    answer: dict = {}

    def start_response(status, response_headers, exc_info=None):
        answer["status"] = status

    # As the test client does: the request's end must not close the test's database connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        response = WSGIHandler()(environ, start_response)
        content = b"".join(response)
        response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return answer["status"], json.loads(content)


def test_a_chunked_body_is_a_411_in_the_error_shape_and_stores_nothing(owner, conversation):
    """Django reads Content-Length bytes of a WSGI body: without it the blocks arrived as an empty
    body ("blocks: This field is required"). Now a 411 says what to send; with the length the same
    body is stored."""
    body = json.dumps({"blocks": [{"type": "react.notes", "text": "x"}]}).encode()
    status, answer = wsgi_post(owner, f"{C}/blocks/", body, {"HTTP_TRANSFER_ENCODING": "chunked"})
    assert status.startswith("411"), answer
    assert answer["error"]["code"] == "length_required"
    assert answer["error"]["details"] == {"transfer_encoding": "chunked"}
    assert "Content-Length" in answer["error"]["message"]
    assert not Block.objects.exists()
    status, _ = wsgi_post(owner, f"{C}/blocks/", body, {"CONTENT_LENGTH": str(len(body))})
    assert status.startswith("201") and Block.objects.count() == 1
