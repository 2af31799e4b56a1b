"""Gemini's implicit caching in the forecast (the longest prefix shared with a recent prompt, from
the model's minimum on: 1,024 tokens for Flash, 4,096 for Pro; nothing written), its usage object
read into billed tokens, and its prices (no write charge, reads at 0.1× input)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from hashlib import sha256

import pytest

from timeline_app.rendering.usage.forecast import CacheBlock, CacheRequest, CacheRules, replay
from timeline_app.rendering.usage.pricing import (
    DEFAULT_PRICES,
    TokenCounts,
    call_cost,
    price_for,
    price_table,
)
from timeline_app.rendering.usage.reported import UsageError, read_usage
from timeline_app.rendering.usage.requests import format_provider

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _request(texts, *, model, tokens_each=100, tail=0):
    out, digest, total = [], b"", 0
    for text in texts:
        digest = sha256(digest + text.encode()).digest()[:8]
        total += tokens_each
        out.append(CacheBlock(digest, total))
    return CacheRequest(provider="google", model=model, blocks=out, input_tokens=total + tail)


@pytest.mark.parametrize(
    ("model", "minimum"),
    [("gemini-3-flash-preview", 1024), ("gemini-2.5-pro", 4096), ("gemini-9-ultra", 4096)],
)
def test_a_repeated_prefix_is_read_from_the_models_minimum_on_and_nothing_is_written(model, minimum):
    short = [f"b{i}" for i in range(minimum // 100)]  # just under the minimum
    long = [f"b{i}" for i in range(minimum // 100 + 2)]
    for texts, hit in ((short, False), (long, True)):
        first = _request(texts, model=model)
        second = _request([*texts, "new"], model=model, tail=30)
        _, forecast = replay([(T0, first), (T0 + timedelta(minutes=2), second)], rules=CacheRules())
        assert forecast.provider == "google"
        assert forecast.cache_creation_input_tokens == 0
        assert forecast.cache_read_input_tokens == (len(texts) * 100 if hit else 0), (model, len(texts))
        assert forecast.uncached_input_tokens == forecast.input_tokens - forecast.cache_read_input_tokens


def test_a_prompt_older_than_the_retention_is_not_read():
    texts = [f"b{i}" for i in range(50)]
    first, second = _request(texts, model="gemini-2.5-flash"), _request(texts, model="gemini-2.5-flash")
    _, late = replay([(T0, first), (T0 + timedelta(minutes=6), second)], rules=CacheRules())
    assert late.cache_read_input_tokens == 0


def test_gemini_contents_follows_googles_rules():
    assert format_provider("gemini_contents") == "google"


def test_the_usage_metadata_is_read_as_reads_and_output_with_thinking():
    usage = read_usage(
        {
            "prompt_token_count": 5000,
            "cached_content_token_count": 4096,
            "candidates_token_count": 200,
            "thoughts_token_count": 300,
            "total_token_count": 5500,
            "prompt_tokens_details": [{"modality": "TEXT", "token_count": 5000}],
        }
    )
    assert usage.provider == "google"
    assert usage.tokens == TokenCounts(
        uncached_input=904, cache_read=4096, cache_write_5m=0, cache_write_1h=0, output=500
    )
    camel = read_usage({"promptTokenCount": 10, "cachedContentTokenCount": 4, "candidatesTokenCount": 1})
    assert camel.tokens == TokenCounts(6, 4, 0, 0, 1)
    with pytest.raises(UsageError):
        read_usage({"prompt_token_count": 10, "cached_content_token_count": 11})


def test_gemini_prices_bill_reads_at_a_tenth_and_no_writes():
    key, price = price_for(DEFAULT_PRICES, "gemini-2.5-flash-preview-09-2025")
    assert key == "gemini-2.5-flash" and price.provider == "google"
    assert price.cache_read == price.input * Decimal("0.1")
    cost = call_cost(price, TokenCounts(1_000_000, 1_000_000, 0, 0, 0))
    assert cost == Decimal("0.30") + Decimal("0.030")
    custom = price_table({"gemini-x": {"provider": "google", "input": "1", "output": "2"}})["gemini-x"]
    assert custom.cache_read == Decimal("0.1")
