"""Issue 20, point 12a: gunicorn's request-head limits (config/gunicorn.py, docs/operations.md "Production").
The longest request line the API's own limits allow reaches Django and gets its JSON answer; a
longer one gets gunicorn's own 414 page (documented), never a 500."""

from __future__ import annotations

import os
import runpy
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings

from tests.e2e.processes import ROOT, free_port, live_database_url, stop

CONFIG = ROOT / "config" / "gunicorn.py"
LIMITS = ("GUNICORN_LIMIT_REQUEST_LINE", "GUNICORN_LIMIT_REQUEST_FIELDS", "GUNICORN_LIMIT_REQUEST_FIELD_SIZE")


def test_the_limits_are_set_overridable_and_documented(monkeypatch):
    for name in LIMITS:
        monkeypatch.delenv(name, raising=False)
    values = runpy.run_path(str(CONFIG))
    assert (
        values["limit_request_line"],
        values["limit_request_fields"],
        values["limit_request_field_size"],
    ) == (
        8190,
        100,
        8190,
    )
    monkeypatch.setenv("GUNICORN_LIMIT_REQUEST_LINE", "0")
    assert runpy.run_path(str(CONFIG))["limit_request_line"] == 0
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert all(name in operations for name in LIMITS)
    assert "414 URI Too Long" in operations


def longest_search_line() -> str:
    """A search with every part at its longest: 64-character ids, a `q` of 500 emoji."""
    conv, context = "c" * 64, "x" * 64
    return f"/api/v1/conversations/{conv}/contexts/{context}/search/?q={quote(chr(0x1F600) * 500)}"


def raw_get(port: int, target: str) -> tuple[int, str, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers.get("content-type", ""), body


@pytest.fixture
def gunicorn(transactional_db, tmp_path: Path) -> Iterator[int]:
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        pytest.skip("the server process shares the database: run under make test (PostgreSQL)")
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GUNICORN_", "PROMETHEUS_"))},
        "DATABASE_URL": live_database_url(),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_TASK_ALWAYS_EAGER": "true",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "1",
    }
    log = (tmp_path / "gunicorn.log").open("wb")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c", str(CONFIG), "config.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(
                        (tmp_path / "gunicorn.log").read_text(errors="replace")[-2000:]
                    ) from None
                time.sleep(0.2)
        yield port
    finally:
        stop(process)
        log.close()


@pytest.mark.e2e
def test_the_longest_search_reaches_django_and_a_longer_line_gets_gunicorns_414(gunicorn):
    target = longest_search_line()
    assert len(f"GET {target} HTTP/1.1") < 8190 < len(f"GET {target}{'a' * 3000} HTTP/1.1")
    status, content_type, body = raw_get(gunicorn, target)
    assert (status, content_type) == (401, "application/json"), body[:300]  # Django's answer: no key
    status, content_type, _ = raw_get(gunicorn, target + "a" * 3000)
    assert (status, content_type) == (414, "text/html")


def raw_post(port: int, target: str, key: str, body: bytes, *, chunked: bool) -> tuple[int, bytes]:
    framing = (
        f"Transfer-Encoding: chunked\r\n\r\n{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        if chunked
        else f"Content-Length: {len(body)}\r\n\r\n".encode() + body
    )
    head = (
        f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + framing)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.e2e
def test_a_chunked_body_through_gunicorn_is_a_411_and_with_its_length_it_is_stored(gunicorn):
    """Issue 30, defect 6: gunicorn de-chunks the body, but Django reads Content-Length bytes of
    it, none without one: the blocks arrived as an empty body (400 "blocks: This field is
    required"). Now a 411 in the error shape says what to send."""
    from timeline_app.models import Block
    from timeline_app.services.api_keys import api_key_create
    from timeline_app.services.conversations import conversation_create

    key, raw = api_key_create(tenant_name="chunked")
    conversation_create(tenant=key.tenant, public_id="c1")
    body = b'{"blocks": [{"type": "react.notes", "text": "x"}]}'
    status, answer = raw_post(gunicorn, "/api/v1/conversations/c1/blocks/", raw, body, chunked=True)
    assert status == 411, answer[:300]
    assert b'"length_required"' in answer and b"Content-Length" in answer
    assert not Block.objects.filter(tenant=key.tenant).exists()
    status, answer = raw_post(gunicorn, "/api/v1/conversations/c1/blocks/", raw, body, chunked=False)
    assert status == 201, answer[:300]
