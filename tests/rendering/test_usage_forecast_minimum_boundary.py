"""The models' minimum cacheable length at its boundary: a prompt prefix of exactly the minimum is
forecast as written by the first request and read by the next; one token less caches nothing
(docs/cost.md; Anthropic per model family, OpenAI 1,024 tokens)."""

from __future__ import annotations

from datetime import timedelta
from hashlib import sha256

import pytest

from tests.rendering.test_usage_forecast import RULES, T0
from timeline_app.rendering.usage.forecast import CacheBlock, CacheRequest, replay

# One model for each minimum: 1,024, 2,048 and 4,096 tokens, and a model the table does not name.
MODELS = ["claude-sonnet-4-5", "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "someone-elses-model"]


def two_requests(model: str, prefix_tokens: int, *, provider: str = "anthropic"):
    """The same prompt twice, a minute apart: 16 blocks adding up to ``prefix_tokens`` (the last
    one carrying an Anthropic breakpoint), then 10 tokens after it."""
    blocks, digest = [], b""
    for i in range(16):
        digest = sha256(digest + f"b{i}".encode()).digest()[:8]
        ttl = 300 if provider == "anthropic" and i == 15 else None
        blocks.append(CacheBlock(digest, prefix_tokens * (i + 1) // 16, ttl))
    prompt = CacheRequest(provider=provider, model=model, blocks=blocks, input_tokens=prefix_tokens + 10)
    return replay([(T0, prompt), (T0 + timedelta(minutes=1), prompt)], rules=RULES)


@pytest.mark.parametrize("model", MODELS)
def test_a_prefix_of_exactly_the_minimum_is_written_then_read(model: str) -> None:
    minimum = RULES.min_tokens(model)

    first, second = two_requests(model, minimum)

    assert (first.cache_write_5m_input_tokens, first.cache_read_input_tokens) == (minimum, 0)
    assert first.uncached_input_tokens == 10
    assert (second.cache_read_input_tokens, second.cache_write_5m_input_tokens) == (minimum, 0)
    assert second.hit


@pytest.mark.parametrize("model", MODELS)
def test_one_token_under_the_minimum_is_neither_written_nor_read(model: str) -> None:
    minimum = RULES.min_tokens(model)

    first, second = two_requests(model, minimum - 1)

    assert first.cache_write_5m_input_tokens == 0 and first.uncached_input_tokens == minimum - 1 + 10
    assert second.cache_read_input_tokens == 0 and not second.hit


def test_an_openai_prompt_of_exactly_1024_tokens_is_retained_then_read() -> None:
    first, second = two_requests("gpt-4.1", 1024, provider="openai")
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == 1024
    _, under = two_requests("gpt-4.1", 1023, provider="openai")
    assert under.cache_read_input_tokens == 0
