"""Every ``anthropic_messages`` and ``gemini_contents`` render ends with a user message: a history
that ends with the model's (a finished turn, the normal state between two prompts) gets a user
message of the ``continue_text`` setting after everything else, no cache marker moved; ``prefill``
keeps the model's message last; the OpenAI formats keep the history as it is. ``ending`` says
which happened."""

from __future__ import annotations

import json
from typing import Any

import pytest

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.settings import RenderSettings, SettingsError, validate_overrides
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window

FILLER = "lorem ipsum dolor sit amet " * 300


def _block(seq: int, type: str, text: str = "", **fields: Any) -> Block:
    block = Block(seq=seq, type=type, turn_id=f"turn_{(seq - 1) // 3}", text=text, **fields)
    return Block(**{**block.__dict__, "tokens": block_tokens(block)})


def _finished_turns(count: int) -> list[Block]:
    """``count`` turns, each header, prompt, the assistant's completion."""
    blocks = []
    for t in range(count):
        seq = 3 * t + 1
        tid = f"turn_{t}"
        blocks += [
            _block(
                seq, b.TURN_HEADER, author="system", ts="2026-01-01T00:00:00Z", path=b.turn_header_path(tid)
            ),
            _block(
                seq + 1, b.USER_PROMPT, f"question {t} {FILLER}", author="user", path=b.user_prompt_path(tid)
            ),
            _block(
                seq + 2,
                b.ASSISTANT_COMPLETION,
                f"answer {t}",
                author="assistant",
                path=b.completion_path(tid),
            ),
        ]
    return blocks


def _render(blocks: list[Block], fmt: str, *, continue_text: str = "Continue.", **options: Any) -> Any:
    return render_window(
        blocks,
        settings=RenderSettings(continue_text=continue_text),
        options=RenderOptions(format=fmt, system_text="You are terse. " * 200, **options),  # type: ignore[arg-type]
        system_tokens=600,
    )


def _last(fmt: str, request: dict[str, Any]) -> dict[str, Any]:
    return (request["contents"] if fmt == "gemini_contents" else request["messages"])[-1]


@pytest.mark.parametrize("fmt", ["anthropic_messages", "gemini_contents"])
def test_a_finished_turn_ends_with_a_user_message_of_continue_text(fmt):
    rendered = _render(_finished_turns(3), fmt, continue_text="Go on, please.")
    assert rendered.ending == "continue_text"
    last = _last(fmt, rendered.request)
    assert last["role"] == "user"
    assert "Go on, please." in json.dumps(last)
    assert violations(fmt, rendered.request) == []
    assert rendered.tokens["tail"] == count_text_tokens("Go on, please.")
    assert (
        rendered.tokens["total"]
        == rendered.tokens["system"] + rendered.tokens["visible"] + rendered.tokens["tail"]
    )


def test_the_continue_message_moves_no_cache_marker():
    blocks = _finished_turns(3)
    continued = _render(blocks, "anthropic_messages")
    prefilled = _render(blocks, "anthropic_messages", prefill=True)
    assert continued.request["messages"][:-1] == prefilled.request["messages"]
    assert continued.cache_points == prefilled.cache_points and continued.cache_points
    assert continued.marked_seqs == prefilled.marked_seqs
    assert "cache_control" not in json.dumps(continued.request["messages"][-1])
    assert continued.prefix.digests == prefilled.prefix.digests


@pytest.mark.parametrize("fmt", ["anthropic_messages", "gemini_contents"])
def test_prefill_keeps_the_models_message_last(fmt):
    rendered = _render(_finished_turns(2), fmt, prefill=True)
    assert rendered.ending == "prefill"
    assert _last(fmt, rendered.request)["role"] in ("assistant", "model")
    assert violations(fmt, rendered.request, prefill=True) == []
    assert violations(fmt, rendered.request)  # without prefill, the rule is broken


@pytest.mark.parametrize("fmt", ["anthropic_messages", "gemini_contents", "openai_responses", "openai_chat"])
def test_a_history_that_ends_with_the_user_is_left_as_it_is(fmt):
    blocks = _finished_turns(2)[:-1]  # the last prompt, not yet answered
    rendered = _render(blocks, fmt)
    assert rendered.ending == "user"
    assert "Continue." not in json.dumps(rendered.request)
    assert rendered.tokens["tail"] == 0


@pytest.mark.parametrize("fmt", ["anthropic_messages", "gemini_contents"])
def test_a_tail_after_the_models_message_is_the_users_message(fmt):
    rendered = _render(_finished_turns(2), fmt, include_announce=True, announce=("budget: 3 calls",))
    assert rendered.ending == "user"
    assert "Continue." not in json.dumps(rendered.request)


@pytest.mark.parametrize("fmt", ["openai_responses", "openai_chat"])
def test_the_openai_formats_keep_the_assistant_last(fmt):
    rendered = _render(_finished_turns(2), fmt)
    assert rendered.ending == "assistant"
    assert "Continue." not in json.dumps(rendered.request)
    assert violations(fmt, rendered.request) == []


def test_an_empty_history_is_the_continue_message_alone():
    for fmt in ("anthropic_messages", "gemini_contents"):
        rendered = _render([], fmt, prefill=True)
        assert rendered.ending == "continue_text"
        assert violations(fmt, rendered.request) == []


def test_the_seed_formats_say_nothing_of_an_ending():
    assert _render(_finished_turns(1), "anthropic").ending is None


@pytest.mark.parametrize("value", ["", "   ", None, 5, "x" * 2001])
def test_a_bad_continue_text_is_refused(value):
    with pytest.raises(SettingsError) as caught:
        validate_overrides({"continue_text": value})
    assert "continue_text" in caught.value.details


def test_a_continue_text_is_taken():
    assert validate_overrides({"continue_text": "Please go on."}) == {"continue_text": "Please go on."}


def test_another_continue_text_is_no_change_of_the_cached_prefix():
    """The cache explainer's settings digest leaves the tail's text out, as it does announce."""
    from timeline_app.services.render import settings_key

    options = RenderOptions(format="anthropic_messages")
    assert settings_key(RenderSettings(), options) == settings_key(
        RenderSettings(continue_text="Go."), options
    )
    assert settings_key(RenderSettings(), options) != settings_key(
        RenderSettings(cache_min_tokens=0), options
    )
