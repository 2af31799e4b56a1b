"""Prices in exact decimals, and usage objects in the shapes the SDKs return."""

from decimal import Decimal

import pytest
from anthropic.types import CacheCreation, Usage
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails
from openai.types.responses import ResponseUsage
from openai.types.responses.response_usage import (
    InputTokensDetails,
    InputTokensDetailsCacheWriteTokensDetails,
    OutputTokensDetails,
)

from timeline_app.rendering.usage.pricing import (
    DEFAULT_PRICES,
    call_cost,
    cost_without_cache,
    price_for,
    price_table,
)
from timeline_app.rendering.usage.reported import UsageError, read_usage

ANTHROPIC = Usage(
    input_tokens=1_200,
    output_tokens=850,
    cache_creation_input_tokens=3_000,
    cache_read_input_tokens=40_000,
    cache_creation=CacheCreation(ephemeral_5m_input_tokens=2_000, ephemeral_1h_input_tokens=1_000),
).model_dump()


def test_an_anthropic_sdk_usage_is_priced_to_the_cent_by_hand():
    usage = read_usage(ANTHROPIC)
    assert usage.provider == "anthropic"
    price = DEFAULT_PRICES["claude-sonnet-4-5"]  # $3 in, $15 out per million
    # 1,200 × 3 + 40,000 × 0.30 + 2,000 × 3.75 + 1,000 × 6 + 850 × 15 = 3,600 + 12,000 + 7,500 +
    # 6,000 + 12,750 = 41,850 micro-dollars per million → $0.04185
    assert call_cost(price, usage.tokens) == Decimal("0.04185")
    # All 44,200 input tokens at $3 + the output: 132,600 + 12,750 → $0.14535
    assert cost_without_cache(price, usage.tokens) == Decimal("0.14535")


def test_an_anthropic_usage_without_the_ttl_breakdown_counts_every_write_as_five_minutes():
    raw = Usage(
        input_tokens=10, output_tokens=1, cache_creation_input_tokens=500, cache_read_input_tokens=0
    ).model_dump()
    tokens = read_usage(raw).tokens
    assert (tokens.cache_write_5m, tokens.cache_write_1h, tokens.uncached_input) == (500, 0, 10)


def test_an_openai_chat_usage_reads_its_cached_tokens():
    raw = CompletionUsage(
        prompt_tokens=5_000,
        completion_tokens=300,
        total_tokens=5_300,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=3_840),
    ).model_dump()
    usage = read_usage(raw)
    assert usage.provider == "openai"
    assert (usage.tokens.cache_read, usage.tokens.uncached_input, usage.tokens.output) == (3_840, 1_160, 300)
    # gpt-4.1: $2 in, $0.50 cached, $8 out: 1,160 × 2 + 3,840 × 0.5 + 300 × 8 = 6,640 → $0.00664
    assert call_cost(DEFAULT_PRICES["gpt-4.1"], usage.tokens) == Decimal("0.00664")


def test_an_openai_responses_usage_reads_its_cached_tokens():
    raw = ResponseUsage(
        input_tokens=2_000,
        output_tokens=10,
        total_tokens=2_010,
        input_tokens_details=InputTokensDetails(cached_tokens=1_024, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    ).model_dump()
    usage = read_usage(raw)
    assert (usage.provider, usage.tokens.cache_read, usage.tokens.uncached_input) == ("openai", 1_024, 976)


def test_openai_written_tokens_count_as_writes_at_the_input_price_by_default():
    raw = CompletionUsage(
        prompt_tokens=3_000,
        completion_tokens=0,
        total_tokens=3_000,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=1_024, cache_write_tokens=1_976),
    ).model_dump()
    tokens = read_usage(raw).tokens
    assert (tokens.cache_read, tokens.cache_write_5m, tokens.uncached_input) == (1_024, 1_976, 0)
    price = DEFAULT_PRICES["gpt-4o"]  # $2.50 in, $1.25 cached
    assert call_cost(price, tokens) == Decimal("0.00622")  # 1,024 × 1.25 + 1,976 × 2.5 = 6,220


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ([1, 2], "usage"),
        ({"output_tokens": 3}, "usage"),
        ({"input_tokens": -1}, "input_tokens"),
        ({"input_tokens": "12"}, "input_tokens"),
        ({"input_tokens": True}, "input_tokens"),
        (
            {
                "input_tokens": 1,
                "cache_creation_input_tokens": 10,
                "cache_creation": {"ephemeral_5m_input_tokens": 4},
            },
            "cache_creation",
        ),
        (
            {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 11}},
            "prompt_tokens_details",
        ),
        ({"prompt_tokens": 10, "prompt_tokens_details": 5}, "prompt_tokens_details"),
    ],
)
def test_a_malformed_usage_object_names_its_field(raw, field):
    with pytest.raises(UsageError) as caught:
        read_usage(raw)
    assert caught.value.field == field


def test_dated_model_names_find_their_price_and_overrides_apply():
    assert price_for(DEFAULT_PRICES, "claude-sonnet-4-5-20250929")[0] == "claude-sonnet-4-5"
    assert price_for(DEFAULT_PRICES, "gpt-4.1-mini-2025-04-14")[0] == "gpt-4.1-mini"
    assert price_for(DEFAULT_PRICES, "llama-3") is None
    table = price_table(
        {
            "llama-3": {"provider": "openai", "input": "0.2", "output": "0.4"},
            "claude-sonnet-4-5": {"input": "2"},
        }
    )
    assert table["llama-3"].cache_read == Decimal("0.2")  # no cached price given: no discount
    sonnet = table["claude-sonnet-4-5"]
    assert (sonnet.cache_write_5m, sonnet.cache_write_1h, sonnet.cache_read, sonnet.output) == (
        Decimal("2.50"),
        Decimal("4"),
        Decimal("0.20"),
        Decimal("15"),
    )


@pytest.mark.parametrize(
    "row",
    [
        {"input": "1"},
        {"provider": "gemini", "input": "1", "output": "1"},
        {"provider": "openai", "input": "x", "output": "1"},
        {"provider": "openai", "input": "-1", "output": "1"},
        {"provider": "openai", "input": "1", "output": "1", "typo": 1},
    ],
)
def test_a_bad_price_row_is_refused(row):
    with pytest.raises(ValueError):
        price_table({"new-model": row})


def test_a_gpt_56_usage_splits_its_writes_by_ttl_and_bills_them_at_one_and_a_quarter():
    raw = ResponseUsage(
        input_tokens=10_000,
        output_tokens=100,
        total_tokens=10_100,
        input_tokens_details=InputTokensDetails(
            cached_tokens=6_000,
            cache_write_tokens=3_000,
            cache_write_tokens_details=InputTokensDetailsCacheWriteTokensDetails(
                ttl_30m_tokens=1_000, ttl_12h_tokens=2_000
            ),
        ),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    ).model_dump()
    tokens = read_usage(raw).tokens
    assert (tokens.uncached_input, tokens.cache_read, tokens.cache_write_5m, tokens.cache_write_1h) == (
        1_000,
        6_000,
        1_000,
        2_000,
    )
    price = DEFAULT_PRICES["gpt-5.6-sol"]  # $4 in, $0.40 cached, $20 out; writes 1.25 × $4 = $5
    assert (price.cache_write_5m, price.cache_write_1h) == (Decimal("5.00"), Decimal("5.00"))
    # 1,000 × 4 + 6,000 × 0.4 + 3,000 × 5 + 100 × 20 = 4,000 + 2,400 + 15,000 + 2,000 = 23,400
    assert call_cost(price, tokens) == Decimal("0.0234")


def test_cache_write_details_that_do_not_add_up_are_refused():
    raw = {
        "input_tokens": 100,
        "input_tokens_details": {
            "cached_tokens": 0,
            "cache_write_tokens": 50,
            "cache_write_tokens_details": {"ttl_30m_tokens": 10, "ttl_12h_tokens": 10},
        },
    }
    with pytest.raises(UsageError) as caught:
        read_usage(raw)
    assert caught.value.field == "input_tokens_details.cache_write_tokens_details"


def test_the_price_table_says_which_models_take_cache_breakpoints():
    assert price_for(DEFAULT_PRICES, "gpt-5.6-terra-2026-07-09")[1].cache_ttls == ("30m", "12h")
    assert all(not DEFAULT_PRICES[m].takes_breakpoints for m in ("gpt-5.5", "gpt-5", "gpt-4.1", "gpt-4o"))
    assert not DEFAULT_PRICES["claude-sonnet-4-6"].takes_breakpoints
    table = price_table(
        {
            "gpt-6.1-sol": {"provider": "openai", "input": "2", "output": "10", "cache_ttls": ["30m"]},
            "gpt-5.6-luna": {"cache_ttls": []},
        }
    )
    new = table["gpt-6.1-sol"]
    assert (new.cache_ttls, new.cache_write_5m, new.cache_read) == (
        ("30m",),
        Decimal("2.50"),
        Decimal("0.20"),
    )
    assert not table["gpt-5.6-luna"].takes_breakpoints


@pytest.mark.parametrize(
    "row",
    [
        {"provider": "openai", "input": "1", "output": "1", "cache_ttls": ["1h"]},
        {"provider": "openai", "input": "1", "output": "1", "cache_ttls": "30m"},
        {"provider": "anthropic", "input": "1", "output": "1", "cache_ttls": ["30m"]},
    ],
)
def test_bad_cache_ttls_are_refused(row):
    with pytest.raises(ValueError):
        price_table({"new-model": row})
