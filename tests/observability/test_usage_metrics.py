"""``/metrics`` counts reported usage: tokens by kind and model, dollars by model, with the model
label taken only from the price table (an invented model name is counted as ``other``)."""

from __future__ import annotations

import pytest

from tests.factories import add_turns
from tests.observability.test_metrics import delta, scrape
from timeline_app.rendering.usage.pricing import DEFAULT_PRICES

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
USAGE = {
    "input_tokens": 1_000,
    "output_tokens": 100,
    "cache_creation_input_tokens": 2_000,
    "cache_read_input_tokens": 30_000,
}


def report(owner, model: str, n: int) -> None:
    render_id = owner.post(f"{BASE}/render/", {"now": f"2026-03-01T12:0{n}:00Z"}).json()["render_id"]
    response = owner.post(f"{BASE}/renders/{render_id}/usage/", {"usage": USAGE, "model": model})
    assert response.status_code == 201, response.content


def test_reported_tokens_and_cost_are_counted_by_priced_model(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    before = scrape()
    report(owner, "claude-sonnet-4-5-20250929", 0)
    for n, invented in enumerate(("claude-next-9", "my-finetune-a", "my-finetune-b"), start=1):
        report(owner, invented, n)
    after = scrape()
    sonnet = {"model": "claude-sonnet-4-5"}
    assert delta(before, after, "timeline_reported_tokens_total", kind="cache_read", **sonnet) == 30_000
    assert delta(before, after, "timeline_reported_tokens_total", kind="uncached", **sonnet) == 1_000
    assert delta(before, after, "timeline_reported_tokens_total", kind="cache_write_5m", **sonnet) == 2_000
    assert delta(before, after, "timeline_reported_tokens_total", kind="output", **sonnet) == 100
    # 1,000×3 + 30,000×0.3 + 2,000×3.75 + 100×15 = 21,000 µ$
    assert delta(before, after, "timeline_reported_cost_usd_total", **sonnet) == pytest.approx(0.021)
    assert delta(before, after, "timeline_reported_tokens_total", kind="cache_read", model="other") == 90_000
    models = {
        dict(labels)["model"]
        for name, labels in after
        if name in {"timeline_reported_tokens_total", "timeline_reported_cost_usd_total"}
    }
    assert models <= set(DEFAULT_PRICES) | {"other"}
