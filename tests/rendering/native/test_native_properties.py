"""Every native render of every random timeline is valid: the providers' SDK request types accept
it, the rules they cannot state hold (``native/validate.py``), and it is byte-stable."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native import NATIVE_FORMATS
from timeline_app.rendering.native.conversation import MISSING_RESULT
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.sdk_types import sdk_type_errors
from timeline_bench.timelines import random_timeline, with_thinking

SYNTHETIC = MISSING_RESULT.split("{", 1)[0]


def _timeline(seed: int) -> list[Any]:
    """A random timeline; every other seed with thinking blocks of the three providers in it
    (signed, redacted, reasoning items, Gemini thoughts and signatures; in place, in odd places,
    hidden): the provider switch."""
    blocks = random_timeline(random.Random(seed))
    return with_thinking(random.Random(seed ^ 0x5EED), blocks) if seed % 2 else blocks


def _render(blocks: list[Any], fmt: str, rng: random.Random, **overrides: Any) -> dict[str, Any]:
    options = RenderOptions(
        format=fmt,  # type: ignore[arg-type]
        include_announce=overrides.get("announce", rng.random() < 0.3),
        announce=("budget: 3 calls",),
        cache_last=rng.random() < 0.8,
        system_text=overrides.get("system", rng.choice(["", "You are an agent. " * 50])),
        prompt_cache_key="tl-key",
        prefill=overrides.get("prefill", False),
        # A GPT-5.6 model (explicit cache breakpoints) half of the time.
        cache_breakpoint_ttls=rng.choice([(), ("30m", "12h")]),
    )
    render_settings = RenderSettings(
        cache_ttl_seconds=rng.choice([300, 3600]),
        cache_min_tokens=rng.choice([0, 1024]),
        cache_point_offset_rounds=rng.randint(1, 5),
    )
    rendered = render_window(
        blocks, settings=render_settings, options=options, system_tokens=rng.randint(0, 3000)
    )
    assert rendered.request is not None
    return rendered.request


@settings(max_examples=examples(2000), deadline=None, database=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_every_native_render_of_a_random_timeline_is_valid_and_byte_stable(seed: int) -> None:
    blocks = _timeline(seed)
    prefill = seed % 7 == 0
    for fmt in NATIVE_FORMATS:
        request = _render(blocks, fmt, random.Random(seed), prefill=prefill)
        assert violations(fmt, request, prefill=prefill) == [], (fmt, stable_json(request)[:4000])
        assert sdk_type_errors(fmt, request) == [], fmt
        again = _render(list(blocks), fmt, random.Random(seed), prefill=prefill)
        assert stable_json(again) == stable_json(request)


def _strip_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_markers(v)
            for k, v in value.items()
            if k not in ("cache_control", "prompt_cache_breakpoint")
        }
    if isinstance(value, list):
        return [_strip_markers(v) for v in value]
    return value


def _items(fmt: str, request: dict[str, Any]) -> list[Any]:
    key = {"openai_responses": "input", "gemini_contents": "contents"}.get(fmt, "messages")
    return request[key]


def _stable_count(items: list[Any]) -> int:
    """How many leading items must survive an append: all but the last round (its results,
    calls and the message before them may grow: OpenAI formats give each result an item) and
    everything from the message before a synthetic result on."""
    synthetic = next((i for i, item in enumerate(items) if SYNTHETIC in stable_json(item)), len(items))
    end = len(items) - 1
    while end > 0 and (
        items[end - 1].get("type") in ("function_call", "function_call_output")
        or items[end - 1].get("role") == "tool"
    ):
        end -= 1
    return max(0, min(synthetic - 1, end - 1))


@settings(max_examples=examples(300), deadline=None, database=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), cut=st.floats(min_value=0.1, max_value=0.95))
def test_appending_keeps_the_earlier_messages_byte_for_byte(seed: int, cut: float) -> None:
    """Earlier messages stay as they were, up to the last one (it may grow: merged content) and the
    one before a synthetic result (its call's result, or more parallel calls, may arrive)."""
    blocks = _timeline(seed)
    head = blocks[: max(1, int(len(blocks) * cut))]
    for fmt in NATIVE_FORMATS:
        before = _items(fmt, _strip_markers(_render(head, fmt, random.Random(seed), announce=False)))
        after = _items(fmt, _strip_markers(_render(blocks, fmt, random.Random(seed), announce=False)))
        keep = _stable_count(before)
        assert [stable_json(m) for m in after[:keep]] == [stable_json(m) for m in before[:keep]], fmt
