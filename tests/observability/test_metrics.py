"""``GET /metrics``: Prometheus text after a render, a TTL prune, compactions and a throttled call."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings
from django.urls import resolve
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.throttling import ScopedRateThrottle

from tests.factories import add_turns
from timeline_app import metrics
from timeline_app.models import Timeline
from timeline_app.request_log import route_template

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
RENDER_ROUTE = "/api/v1/conversations/{conv}/render/"


def scrape(**headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = Client().get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def delta(before, after, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_metrics_count_renders_prunes_compactions_summaries_and_appends(owner, conversation):
    conversation.settings = {"ttl_keep_recent_turns": 2}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    before = scrape()

    owner.post(f"{BASE}/blocks/", {"blocks": [{"type": "react.notes", "author": "react", "text": "more"}]})
    assert (
        owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:00:00Z"}).json()["pruning"]["status"] == "armed"
    )
    cold = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:20:00Z"}).json()
    assert cold["pruning"]["status"] == "pruned"
    compacted = owner.post(f"{BASE}/render/", {"max_tokens": 3_000, "now": "2026-01-01T00:21:00Z"}).json()
    assert compacted["compaction"] is not None
    after = scrape()

    assert delta(before, after, "timeline_render_duration_seconds_count") == 3
    assert delta(before, after, "timeline_append_duration_seconds_count") == 1
    assert delta(before, after, "timeline_ttl_prunes_total") == 1
    assert delta(before, after, "timeline_ttl_pruned_blocks_total") == len(cold["pruning"]["hidden_paths"])
    assert delta(before, after, "timeline_compactions_total", trigger="render", status="applied") == 1
    assert delta(before, after, "timeline_compaction_duration_seconds_count", trigger="render") == 1
    assert delta(before, after, "timeline_summarizer_duration_seconds_count", summarizer="extractive") == 1
    assert delta(before, after, "timeline_summarizer_fallbacks_total", summarizer="extractive") == 0
    requests = "timeline_http_requests_total"
    assert delta(before, after, requests, method="POST", route=RENDER_ROUTE, status="200") == 3
    assert (
        delta(
            before, after, "timeline_http_request_duration_seconds_count", method="POST", route=RENDER_ROUTE
        )
        == 3
    )


def test_a_throttled_compact_call_is_counted(owner, conversation, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"compact": "1/min"})
    before = scrape()

    statuses = [owner.post(f"{BASE}/compact/", {"wait": True}).status_code for _ in range(2)]

    assert statuses == [200, 429]
    after = scrape()
    assert (
        delta(
            before, after, "timeline_throttled_requests_total", route="/api/v1/conversations/{conv}/compact/"
        )
        == 1
    )
    assert delta(before, after, "timeline_compactions_total", trigger="manual", status="skipped") == 0, (
        "nothing to compact is no compaction"
    )


@override_settings(TIMELINE_METRICS_TOKEN="metrics-t0ken")
@pytest.mark.parametrize("header", [None, "Bearer wrong", "metrics-t0ken", "Bearer metrics-t0ken "])
def test_with_a_token_set_metrics_need_exactly_that_bearer_token(header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = Client().get("/metrics", **extra)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert b"timeline_" not in response.content


@override_settings(TIMELINE_METRICS_TOKEN="metrics-t0ken")
def test_with_the_token_metrics_are_served():
    assert "timeline_render_duration_seconds" in str(scrape(HTTP_AUTHORIZATION="Bearer metrics-t0ken"))


def http_label_values(samples) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {"method": set(), "route": set(), "status": set()}
    for (name, labels), _ in samples.items():
        if name.startswith("timeline_http_"):
            for key, value in labels:
                if key in values:
                    values[key].add(value)
    return values


def test_invented_methods_add_no_label_values_and_every_label_is_from_the_fixed_set(owner, conversation):
    anyone = Client()  # before any authentication
    anyone.generic("BREW", "/api/v1/conversations/c1/")  # the one "other" series it may add
    owner.client.generic("BREW", "/api/v1/conversations/c1/")
    owner.get("/api/v1/no/such/route/")
    before = scrape()
    size = len(Client().get("/metrics").content)

    for i in range(200):
        anyone.generic(f"INVENTED{i}", f"/api/v1/conversations/c1/?n={i}")
        owner.client.generic(f"X{i}", "/api/v1/conversations/c1/")
    after = scrape()

    assert set(after) == set(before), "no new series, whatever the method"
    assert len(Client().get("/metrics").content) < size + 1_000, "only the counts' digits grow"
    other = [
        after[key] - before[key]
        for key in after
        if key[0] == "timeline_http_requests_total" and ("method", "other") in key[1]
    ]
    assert sum(other) == 400
    labels = http_label_values(after)
    assert labels["method"] <= metrics.HTTP_METHODS | {"other"}
    assert "other" in labels["method"] and "BREW" not in labels["method"]
    assert labels["status"] <= metrics.HTTP_STATUSES | {"other"}
    assert route_template(resolve("/api/v1/conversations/c1/")) in labels["route"]
    assert all(route.startswith("/api/") or route == "<unmatched>" for route in labels["route"])


def test_status_codes_outside_the_registered_set_are_counted_as_other():
    assert metrics.status_label(200) == "200"
    assert metrics.status_label(599) == "other"
    assert metrics.method_label("get") == "other"
    assert metrics.method_label("PATCH") == "PATCH"


@override_settings(DEBUG=False, TIMELINE_METRICS_TOKEN="")
@pytest.mark.parametrize(
    ("remote", "headers"),
    [
        ("10.1.2.3", {}),
        ("203.0.113.9", {}),
        ("127.0.0.1", {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}),  # a proxy on this host, for anyone
        ("127.0.0.1", {"HTTP_FORWARDED": "for=203.0.113.9"}),
        ("not-an-address", {}),
    ],
)
def test_in_production_without_a_token_metrics_are_refused_to_other_hosts(remote, headers):
    response = Client(REMOTE_ADDR=remote).get("/metrics", **headers)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert b"timeline_" not in response.content


@override_settings(DEBUG=False, TIMELINE_METRICS_TOKEN="")
@pytest.mark.parametrize("remote", ["127.0.0.1", "127.0.0.2", "::1"])
def test_in_production_without_a_token_metrics_are_served_to_this_host(remote):
    response = Client(REMOTE_ADDR=remote).get("/metrics")
    assert response.status_code == 200
    assert b"timeline_" in response.content


@override_settings(DEBUG=False, TIMELINE_METRICS_TOKEN="metrics-t0ken")
def test_in_production_with_a_token_metrics_are_served_anywhere_with_it():
    response = Client(REMOTE_ADDR="203.0.113.9").get("/metrics", HTTP_AUTHORIZATION="Bearer metrics-t0ken")
    assert response.status_code == 200


@override_settings(DEBUG=True, TIMELINE_METRICS_TOKEN="")
def test_with_debug_on_metrics_stay_open():
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
