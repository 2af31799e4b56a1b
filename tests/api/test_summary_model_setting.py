"""A conversation's ``summary_model`` setting, validated against the configured summarizer."""

import pytest
from django.test import override_settings

from tests.factories import add_turns
from timeline_app.models import Timeline

pytestmark = pytest.mark.django_db


def create(owner, model):
    return owner.post("/api/v1/conversations/", {"settings": {"summary_model": model}})


@override_settings(TIMELINE_SUMMARIZER="anthropic")
def test_the_anthropic_summarizer_takes_claude_models_only(owner):
    assert create(owner, "claude-haiku-4-5").status_code == 201
    refused = create(owner, "gpt-4.1-mini")
    assert refused.status_code == 400 and "summary_model" in refused.json()["error"]["details"]["settings"]


@override_settings(TIMELINE_SUMMARIZER="openai")
def test_an_openai_compatible_summarizer_takes_any_name_but_an_anthropic_one(owner):
    assert create(owner, "gpt-4.1-mini").status_code == 201
    assert create(owner, "meta-llama/Llama-3.3-70B-Instruct").status_code == 201
    assert create(owner, "claude-sonnet-4-5").status_code == 400


@override_settings(TIMELINE_SUMMARIZER="extractive")
def test_without_an_llm_summarizer_a_summary_model_is_refused(owner):
    assert create(owner, "claude-haiku-4-5").status_code == 400


@pytest.mark.parametrize("bad", [12, "", "no spaces please", "x" * 101])
def test_a_malformed_summary_model_is_a_400(owner, bad):
    with override_settings(TIMELINE_SUMMARIZER="anthropic"):
        response = create(owner, bad)
    assert response.status_code == 400 and "summary_model" in response.json()["error"]["details"]["settings"]


def test_the_summary_model_does_not_change_the_render_fingerprint(owner):
    from timeline_app.domain.settings import RenderSettings
    from timeline_app.rendering.pipeline import RenderOptions
    from timeline_app.services.render import settings_key

    options = RenderOptions()
    assert settings_key(RenderSettings(summary_model="claude-haiku-4-5"), options) == settings_key(
        RenderSettings(), options
    )


@override_settings(TIMELINE_SUMMARIZER="openai", OPENAI_API_KEY="sk-test")
def test_compaction_uses_the_conversations_summary_model(owner, monkeypatch):
    from timeline_app.services.compaction import run as compaction_services

    seen = []
    real = compaction_services.configured_summarizer
    monkeypatch.setattr(
        compaction_services, "configured_summarizer", lambda **kw: seen.append(kw) or real(**kw)
    )
    conv = owner.post(
        "/api/v1/conversations/", {"id": "sm", "settings": {"summary_model": "qwen2.5"}}
    ).json()["id"]
    add_turns(Timeline.objects.get(conversation__public_id=conv), 4)
    monkeypatch.setattr(
        "compaction.summary.openai.OpenAISummarizer.summarize",
        lambda self, **kw: "## Goals / requests\n- x",
    )
    compacted = owner.post(f"/api/v1/conversations/{conv}/compact/", {"force": True, "wait": True})
    assert compacted.json()["status"] == "applied"
    assert seen == [{"model": "qwen2.5"}]
