"""Which summarizer a compaction uses: a custom class, Anthropic, or extractive."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from compaction.summary import ExtractiveSummarizer
from compaction.summary.anthropic import AnthropicSummarizer
from timeline_app.services.compaction import configured_summarizer, fallback_summarizer

from .summarizers import SlowSummarizer


def test_extractive_by_default():
    assert isinstance(configured_summarizer(), ExtractiveSummarizer)
    assert isinstance(fallback_summarizer(), ExtractiveSummarizer)


@override_settings(TIMELINE_SUMMARIZER_CLASS="tests.services.compaction.summarizers.SlowSummarizer")
def test_a_custom_summarizer_class_wins():
    assert isinstance(configured_summarizer(), SlowSummarizer)


@override_settings(TIMELINE_SUMMARIZER_CLASS="tests.services.compaction.nowhere.Nothing")
def test_a_custom_class_that_does_not_import_is_a_configuration_error():
    with pytest.raises(ImproperlyConfigured, match="cannot be imported"):
        configured_summarizer()


@override_settings(TIMELINE_SUMMARIZER_CLASS="collections.OrderedDict")
def test_a_custom_class_that_is_no_summarizer_is_a_configuration_error():
    with pytest.raises(ImproperlyConfigured, match="summarize"):
        configured_summarizer()


@override_settings(
    TIMELINE_SUMMARIZER="anthropic",
    ANTHROPIC_API_KEY="sk-ant-test",
    TIMELINE_SUMMARY_MODEL="claude-x",
    TIMELINE_ANTHROPIC_MAX_RETRIES=7,
    TIMELINE_ANTHROPIC_TIMEOUT_SECONDS=12.5,
)
def test_anthropic_gets_the_model_and_the_retry_settings():
    summarizer = configured_summarizer()
    assert isinstance(summarizer, AnthropicSummarizer)
    assert summarizer.model == "claude-x"
    assert summarizer._client.max_retries == 7
    assert summarizer._client.timeout == 12.5
    assert "sk-ant-test" not in repr(summarizer)


@override_settings(
    TIMELINE_SUMMARIZER="openai",
    OPENAI_API_KEY="sk-test",
    TIMELINE_SUMMARY_MODEL="qwen2.5-7b",
    TIMELINE_OPENAI_BASE_URL="http://ollama.internal:11434/v1",
    TIMELINE_OPENAI_MAX_RETRIES=3,
    TIMELINE_OPENAI_TIMEOUT_SECONDS=9.0,
    TIMELINE_OPENAI_TOKEN_LIMIT_PARAM="max_tokens",
)
def test_openai_gets_the_base_url_model_and_retry_settings_and_a_conversation_model_wins():
    from compaction.summary.openai import OpenAISummarizer

    summarizer = configured_summarizer()
    assert isinstance(summarizer, OpenAISummarizer)
    assert summarizer.model == "qwen2.5-7b" and summarizer.token_limit_param == "max_tokens"
    assert str(summarizer._client.base_url) == "http://ollama.internal:11434/v1/"
    assert summarizer._client.max_retries == 3 and summarizer._client.timeout == 9.0
    assert configured_summarizer(model="llama3.1:8b").model == "llama3.1:8b"


@override_settings(TIMELINE_SUMMARIZER="anthropic", ANTHROPIC_API_KEY="sk-ant-test")
def test_a_conversation_summary_model_overrides_the_anthropic_model():
    assert configured_summarizer(model="claude-haiku-4-5").model == "claude-haiku-4-5"
