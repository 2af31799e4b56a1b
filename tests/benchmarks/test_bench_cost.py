"""``bench cost``: the forecast against the independent provider simulator on a simulated agent
run through the HTTP API (a short run here; ``manage.py bench cost`` runs 36 turns)."""

from datetime import UTC, datetime

import pytest

from timeline_bench import cost, provider_sim

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def body(texts, marks, model="claude-sonnet-4-5"):
    parts = [
        {"type": "text", "text": t, **({"cache_control": {"type": "ephemeral"}} if i in marks else {})}
        for i, t in enumerate(texts)
    ]
    return {"model": model, "system": "sys", "messages": [{"role": "user", "content": parts}]}


def test_the_run_bills_with_the_models_minimum_and_forgets_after_the_ttl():
    """``bench cost`` bills through ``provider_sim.CacheSimulator`` (the one simulator) with the
    model's minimum cacheable length: 2,000 tokens cache on Sonnet 4.5 but not on Haiku 4.5."""
    texts = [" ".join(f"w{i}_{j}" for j in range(100)) for i in range(10)]
    for model, cached in (("claude-sonnet-4-5", True), ("claude-haiku-4-5-20251001", False)):
        sim = provider_sim.CacheSimulator(min_tokens=provider_sim.min_tokens_for(model))
        first = sim.request(0, body(texts, {9}, model))
        again = sim.request(240, body(texts, {9}, model))
        assert (again["cache_read_input_tokens"] > 0) is cached, model
        assert (first["cache_creation_input_tokens"] > 0) is cached, model
        assert sim.request(240 + 301, body(texts, {9}, model))["cache_read_input_tokens"] == 0


@pytest.mark.django_db(transaction=True)
def test_the_forecast_agrees_with_the_simulator_on_a_short_agent_run():
    lines: list[str] = []
    cost.run(lines.append, turns=9)
    text = "\n".join(lines)
    assert "goal >= 99 %: met" in text, text
    assert "disagreement" not in text, text
