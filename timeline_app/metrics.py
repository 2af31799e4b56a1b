"""Prometheus metrics (``GET /metrics``): the metric objects, the ``observe_*`` helpers the shell
calls, and the view.

Under several processes (gunicorn workers, the Celery worker beside them) set
``PROMETHEUS_MULTIPROC_DIR`` to an empty directory shared by all of them before they start
(``make serve`` does): each process writes its samples there and ``/metrics`` adds them up.
Without it, ``/metrics`` shows this process's own samples (the embedded mode).
"""

from __future__ import annotations

import os
from decimal import Decimal
from http import HTTPStatus

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, multiprocess

# Seconds: from a warm append (milliseconds) to a render that waited for a summary (tens of seconds).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

HTTP_REQUESTS = Counter(
    "timeline_http_requests", "API requests by route template and status.", ["method", "route", "status"]
)
HTTP_DURATION = Histogram(
    "timeline_http_request_duration_seconds",
    "API request latency by route template.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
RENDER_DURATION = Histogram(
    "timeline_render_duration_seconds", "Latency of render requests (any context).", buckets=LATENCY_BUCKETS
)
APPEND_DURATION = Histogram(
    "timeline_append_duration_seconds",
    "Latency of append requests: blocks, turns and messages (any context).",
    buckets=LATENCY_BUCKETS,
)
THROTTLED = Counter("timeline_throttled_requests", "API requests answered 429 (throttled).", ["route"])
COMPACTIONS = Counter(
    "timeline_compactions", "Finished compactions by trigger and final status.", ["trigger", "status"]
)
COMPACTION_DURATION = Histogram(
    "timeline_compaction_duration_seconds",
    "Duration of a compaction from claim to final status.",
    ["trigger"],
    buckets=LATENCY_BUCKETS,
)
SUMMARIZER_DURATION = Histogram(
    "timeline_summarizer_duration_seconds",
    "Time spent writing one compaction's summaries, by the summarizer that wrote them.",
    ["summarizer"],
    buckets=LATENCY_BUCKETS,
)
SUMMARIZER_FALLBACKS = Counter(
    "timeline_summarizer_fallbacks",
    "Summaries the extractive fallback wrote because the configured summarizer failed.",
    ["summarizer"],
)
REPORTED_TOKENS = Counter(
    "timeline_reported_tokens",
    "Tokens of reported usage by kind (uncached, cache_read, cache_write_5m, cache_write_1h, output) "
    "and model (the price table's entry, or 'other').",
    ["kind", "model"],
)
COST_USD = Counter(
    "timeline_reported_cost_usd", "Dollars of reported usage by model (price table entry).", ["model"]
)
TTL_PRUNES = Counter("timeline_ttl_prunes", "Renders whose TTL pruning hid blocks (the cache was cold).")
TTL_PRUNED_BLOCKS = Counter("timeline_ttl_pruned_blocks", "Blocks hidden by TTL pruning.")

APPEND_SUFFIXES = ("/blocks/", "/turns/", "/messages/")

# Every label value comes from a fixed set, whatever a client sends (issue 20.3: 1,500 invented
# methods grew the scrape from 95 kB to 2.97 MB): the standard methods or "other", the route
# template of a URL pattern (``request_log.route_template``, "<unmatched>" when none matched), a
# registered HTTP status code or "other".
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})
HTTP_STATUSES = frozenset(str(int(status)) for status in HTTPStatus)
OTHER = "other"


def method_label(method: str) -> str:
    return method if method in HTTP_METHODS else OTHER


def status_label(status: int) -> str:
    return str(status) if str(status) in HTTP_STATUSES else OTHER


def observe_request(*, method: str, route: str, status: int, seconds: float) -> None:
    method = method_label(method)
    HTTP_REQUESTS.labels(method, route, status_label(status)).inc()
    HTTP_DURATION.labels(method, route).observe(seconds)
    if status == 429:
        THROTTLED.labels(route).inc()
    if method == "POST" and route.endswith("/render/"):
        RENDER_DURATION.observe(seconds)
    elif method == "POST" and route.endswith(APPEND_SUFFIXES):
        APPEND_DURATION.observe(seconds)


def observe_compaction(*, trigger: str, status: str, seconds: float) -> None:
    COMPACTIONS.labels(trigger, status).inc()
    COMPACTION_DURATION.labels(trigger).observe(seconds)


def observe_summary(*, configured: str, written_by: str, seconds: float, fell_back: bool) -> None:
    """One compaction's summaries: who wrote them, how long it took, whether the extractive
    fallback stood in for the ``configured`` summarizer."""
    SUMMARIZER_DURATION.labels(written_by).observe(seconds)
    if fell_back:
        SUMMARIZER_FALLBACKS.labels(configured).inc()


def observe_ttl(*, status: str, hidden: int) -> None:
    if hidden:
        TTL_PRUNES.inc()
        TTL_PRUNED_BLOCKS.inc(hidden)


def registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        combined = CollectorRegistry()
        multiprocess.MultiProcessCollector(combined)  # type: ignore[no-untyped-call]
        return combined
    return REGISTRY


def observe_usage(*, model: str, tokens: dict[str, int], cost: Decimal | None) -> None:
    """One reported render. ``model`` is the price table's entry that priced it ("" when none:
    counted as "other"), so the label values are bounded by the table."""
    label = model or OTHER
    for kind, count in tokens.items():
        REPORTED_TOKENS.labels(kind=kind, model=label).inc(count)
    if cost is not None:
        COST_USD.labels(model=label).inc(float(cost))
