"""``bench cost``: the forecast against the independent provider simulator on a simulated agent
run through the HTTP API (a short run here; ``manage.py bench cost`` runs 36 turns)."""

from datetime import UTC, datetime, timedelta

import pytest

from timeline_app.benchmarks import cost
from timeline_app.benchmarks.cost_sim import AnthropicCacheSimulator

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def body(texts, marks, model="claude-sonnet-4-5"):
    parts = [
        {"type": "text", "text": t, **({"cache_control": {"type": "ephemeral"}} if i in marks else {})}
        for i, t in enumerate(texts)
    ]
    return {"model": model, "system": "sys", "messages": [{"role": "user", "content": parts}]}


def test_the_simulator_writes_then_reads_and_forgets_after_the_ttl():
    texts = [" ".join(f"w{i}_{j}" for j in range(200)) for i in range(10)]
    sim = AnthropicCacheSimulator()
    first = sim.call(body(texts, {9}), at=T0)
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1024
    again = sim.call(body(texts, {9}), at=T0 + timedelta(minutes=4))
    assert (
        again["cache_read_input_tokens"] == first["cache_creation_input_tokens"] + first["input_tokens"] - 1
        or again["cache_read_input_tokens"] > 0
    )
    late = sim.call(body(texts, {9}), at=T0 + timedelta(minutes=10))
    assert late["cache_read_input_tokens"] == 0


def test_below_the_minimum_the_simulator_caches_nothing():
    sim = AnthropicCacheSimulator()
    sim.call(body(["short"], {0}), at=T0)
    assert sim.call(body(["short"], {0}), at=T0 + timedelta(minutes=1))["cache_read_input_tokens"] == 0


@pytest.mark.django_db(transaction=True)
def test_the_forecast_agrees_with_the_simulator_on_a_short_agent_run():
    lines: list[str] = []
    cost.run(lines.append, turns=9)
    text = "\n".join(lines)
    assert "goal >= 99 %: met" in text, text
    assert "disagreement" not in text, text
