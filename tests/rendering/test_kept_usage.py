"""``kept_usage`` (pure, issue 30 defect 1): a stored usage report keeps only what the cost model
reads, so extra SDK keys (or junk) neither cost storage nor change the reading."""

from __future__ import annotations

import json

from anthropic.types import CacheCreation, Usage
from google.genai.types import GenerateContentResponseUsageMetadata
from hypothesis import given
from hypothesis import strategies as st
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails
from openai.types.responses import ResponseUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from timeline_app.rendering.usage.reported import MAX_TOKENS, UsageError, kept_usage, read_usage

counts = st.integers(min_value=0, max_value=MAX_TOKENS)
junk_keys = st.text(min_size=1, max_size=12).filter(
    lambda key: (
        key
        not in {
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "cache_creation",
            "prompt_tokens",
            "completion_tokens",
            "prompt_tokens_details",
            "input_tokens_details",
            "total_tokens",
            "cached_tokens",
            "cache_write_tokens",
            "ephemeral_5m_input_tokens",
            "ephemeral_1h_input_tokens",
            "prompt_token_count",
            "cached_content_token_count",
            "tool_use_prompt_token_count",
            "candidates_token_count",
            "thoughts_token_count",
        }
        and not key.endswith("TokenCount")
    )
)
junk = st.dictionaries(junk_keys, st.one_of(st.text(max_size=50), st.integers(), st.none()), max_size=5)


@st.composite
def sdk_usages(draw):
    """A usage object of one of the three SDK shapes, as its SDK dumps it, with junk keys added at
    the top level and in its detail object."""
    kind = draw(st.sampled_from(["anthropic", "chat", "responses", "gemini"]))
    if kind == "gemini":
        cached, prompt = sorted((draw(counts), draw(counts)))
        usage = GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            cached_content_token_count=cached,
            candidates_token_count=draw(counts),
            thoughts_token_count=draw(counts),
        ).model_dump(mode="json", exclude_none=True)
        return {**draw(junk), **usage}
    if kind == "anthropic":
        halves = st.integers(min_value=0, max_value=MAX_TOKENS // 2)  # their sum is a count too
        five, hour = draw(halves), draw(halves)
        usage = Usage(
            input_tokens=draw(counts),
            output_tokens=draw(counts),
            cache_creation_input_tokens=five + hour,
            cache_read_input_tokens=draw(counts),
            cache_creation=CacheCreation(ephemeral_5m_input_tokens=five, ephemeral_1h_input_tokens=hour),
        ).model_dump(mode="json")
        details = "cache_creation"
    elif kind == "chat":
        cached, prompt = sorted((draw(counts), draw(counts)))
        usage = CompletionUsage(
            prompt_tokens=prompt,
            completion_tokens=draw(counts),
            total_tokens=prompt,
            prompt_tokens_details=PromptTokensDetails(cached_tokens=cached),
        ).model_dump(mode="json")
        details = "prompt_tokens_details"
    else:
        cached, prompt = sorted((draw(counts), draw(counts)))
        usage = ResponseUsage(
            input_tokens=prompt,
            output_tokens=0,
            total_tokens=prompt,
            input_tokens_details=InputTokensDetails(cached_tokens=cached, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        ).model_dump(mode="json")
        details = "input_tokens_details"
    usage[details] = {**draw(junk), **usage[details]}
    return {**draw(junk), **usage}


@given(sdk_usages())
def test_the_kept_part_reads_the_same_and_is_a_few_hundred_bytes(usage):
    kept = kept_usage(usage)
    assert read_usage(kept) == read_usage(usage)
    assert len(json.dumps(kept)) <= 400


def test_megabytes_of_extra_keys_are_not_kept():
    usage = {"input_tokens": 10, "output_tokens": 2, **{f"junk_{n}": "x" * 100 for n in range(10_000)}}
    assert kept_usage(usage) == {"input_tokens": 10, "output_tokens": 2}


def test_a_count_of_another_shape_is_not_kept():
    """A Chat Completions usage reads prompt_tokens: an ``input_tokens`` beside it is not a count
    it checks, so it is not kept either (any value would be stored)."""
    usage = {"prompt_tokens": 10, "completion_tokens": 1, "input_tokens": "x" * 1000}
    assert kept_usage(usage) == {"prompt_tokens": 10, "completion_tokens": 1}


def test_total_tokens_is_kept_so_it_must_be_a_count():
    try:
        read_usage({"input_tokens": 1, "total_tokens": "x" * 1000})
    except UsageError as exc:
        assert exc.field == "total_tokens"
    else:
        raise AssertionError("a total_tokens that is not a count was accepted")


def test_gemini_camel_case_counts_are_kept_once_under_the_sdk_names():
    """The REST API's camelCase names read as the SDK's; a junk value under the other spelling of a
    count read from its twin is not kept (it would be stored unchecked)."""
    usage = {"promptTokenCount": "x" * 1000, "prompt_token_count": 10, "candidatesTokenCount": 2}
    kept = kept_usage(usage)
    assert kept == {"prompt_token_count": 10, "candidates_token_count": 2}
    assert read_usage(kept) == read_usage(usage)
