"""One JSON log line per API request: method, route template, status, duration, conversation —
never a block's text, a query string or a key."""

from __future__ import annotations

import json
import logging

import pytest

from timeline_app.request_log import route_template

pytestmark = pytest.mark.django_db


def lines(caplog) -> list[dict]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "timeline.request"]


def test_each_api_request_logs_one_line_without_text_or_key(owner, conversation, caplog):
    caplog.set_level(logging.INFO, logger="timeline.request")
    secret_text = "the user's private note 8f3a"

    owner.post(
        "/api/v1/conversations/c1/contexts/scratch/blocks/",
        {"blocks": [{"type": "react.notes", "author": "react", "text": secret_text}]},
    )
    owner.get("/api/v1/conversations/c1/search/", q="private note")
    owner.get("/api/v1/conversations/nope/")

    logged = lines(caplog)
    assert [
        (line["method"], line["route"], line["status"], line["conversation"], line["context"])
        for line in logged
    ] == [
        ("POST", "/api/v1/conversations/{conv}/contexts/{context}/blocks/", 201, "c1", "scratch"),
        ("GET", "/api/v1/conversations/{conv}/search/", 200, "c1", "main"),
        ("GET", "/api/v1/conversations/{conv}/", 404, "nope", "main"),
    ]
    assert all(line["duration_ms"] >= 0 for line in logged)
    text = caplog.text
    assert secret_text not in text and "private" not in text and owner.raw_key not in text


def test_requests_outside_the_api_are_not_logged(client, caplog):
    caplog.set_level(logging.INFO, logger="timeline.request")
    client.get("/healthz")
    assert lines(caplog) == []


def test_route_templates_name_the_parameters_of_path_and_re_path_routes():
    from django.urls import resolve

    assert route_template(resolve("/api/v1/conversations/")) == "/api/v1/conversations/"
    assert (
        route_template(resolve("/api/v1/conversations/a.b-c/render/"))
        == "/api/v1/conversations/{conv}/render/"
    )
    assert route_template(None) == "<unmatched>"
