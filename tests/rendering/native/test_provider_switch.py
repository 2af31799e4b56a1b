"""The provider switch, as a matrix: a conversation whose turns were answered by Claude (signed and
redacted thinking), GPT (a reasoning item with encrypted content and a summary) and Gemini (a
signed thought, a thought signature on a function call) renders valid in every native format;
each format keeps only its own provider's opaque parts, and the readable text of the others."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native import NATIVE_FORMATS
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.sdk_types import sdk_type_errors

# provider → (its thinking blocks' meta and text, the opaque strings only its format may carry,
# the readable text every native format keeps)
PROVIDERS: dict[str, dict[str, Any]] = {
    "anthropic": {
        "thinking": [
            (
                {"provider": "anthropic", "kind": "thinking", "signature": "ClaudeSig0123=="},
                "claude reads the ask",
            ),
            ({"provider": "anthropic", "kind": "redacted_thinking", "data": "ClaudeRedacted456"}, ""),
        ],
        "opaque": ["ClaudeSig0123==", "ClaudeRedacted456"],
        "readable": ["claude reads the ask"],
    },
    "openai": {
        "thinking": [
            (
                {
                    "provider": "openai",
                    "kind": "reasoning",
                    "id": "rs_gpt789",
                    "summary": [{"type": "summary_text", "text": "gpt plans the lookup"}],
                    "encrypted_content": "gAAAAABgptEncrypted",
                },
                "",
            )
        ],
        "opaque": ["rs_gpt789", "gAAAAABgptEncrypted"],
        "readable": ["gpt plans the lookup"],
    },
    "google": {
        "thinking": [
            (
                {"provider": "google", "kind": "thought", "signature": "R2VtaW5pVGhvdWdodA=="},
                "gemini weighs it",
            ),
            ({"provider": "google", "kind": "signature", "signature": "R2VtaW5pQ2FsbFNpZw=="}, ""),
        ],
        "opaque": ["R2VtaW5pVGhvdWdodA==", "R2VtaW5pQ2FsbFNpZw=="],
        "readable": ["gemini weighs it"],
    },
}
OWN = {"anthropic_messages": "anthropic", "openai_responses": "openai", "gemini_contents": "google"}


def _block(seq: int, type: str, turn: str, text: str = "", **fields: Any) -> Block:
    block = Block(seq=seq, type=type, turn_id=turn, text=text, **fields)
    return Block(**{**block.__dict__, "tokens": block_tokens(block)})


def _history(order: tuple[str, ...], *, finished: bool) -> list[Block]:
    """One turn per provider in ``order``: prompt, the provider's thinking, a call, its result, an
    answer (the last turn stops after its call's result when not ``finished``)."""
    seq = itertools.count(1)
    blocks: list[Block] = []
    for t, provider in enumerate(order):
        turn = f"turn_{t}"
        blocks.append(
            _block(
                next(seq),
                b.TURN_HEADER,
                turn,
                author="system",
                ts="2026-01-01T00:00:00Z",
                path=b.turn_header_path(turn),
            )
        )
        blocks.append(
            _block(next(seq), b.USER_PROMPT, turn, f"ask {t}", author="user", path=b.user_prompt_path(turn))
        )
        for meta, text in PROVIDERS[provider]["thinking"]:
            blocks.append(_block(next(seq), b.THINKING, turn, text, author="assistant", meta=meta))
        call_id = f"call_{provider}_{t}"
        blocks.append(
            _block(
                next(seq),
                b.TOOL_CALL,
                turn,
                json.dumps({"tool_id": "orders.lookup", "params": {"turn": t}}),
                author="react",
                mime="application/json",
                meta={"tool_call_id": call_id},
            )
        )
        blocks.append(
            _block(next(seq), b.TOOL_RESULT, turn, "found", author="tool", meta={"tool_call_id": call_id})
        )
        if finished or t < len(order) - 1:
            blocks.append(_block(next(seq), b.ASSISTANT_COMPLETION, turn, f"answer {t}", author="assistant"))
    return blocks


ORDERS = list(itertools.permutations(PROVIDERS))


@pytest.mark.parametrize("gpt_5_6", [False, True], ids=["before-gpt-5.6", "gpt-5.6"])
@pytest.mark.parametrize("finished", [True, False])
@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
def test_every_format_keeps_its_own_opaque_parts_and_everyones_readable_text(order, finished, gpt_5_6):
    """``gpt_5_6``: the call's model takes OpenAI's explicit cache breakpoints (its price row's
    ``cache_ttls``): the OpenAI formats carry them, beside the reasoning items, the others none."""
    blocks = _history(order, finished=finished)
    for fmt in NATIVE_FORMATS:
        rendered = render_window(
            blocks,
            settings=RenderSettings(cache_min_tokens=0),
            options=RenderOptions(
                format=fmt,  # type: ignore[arg-type]
                system_text="You help with orders.",
                cache_breakpoint_ttls=("30m", "12h") if gpt_5_6 else (),
            ),
        )
        request = rendered.request
        assert request is not None
        assert violations(fmt, request) == [], (fmt, violations(fmt, request))
        assert sdk_type_errors(fmt, request) == [], fmt
        text = json.dumps(request)
        for provider, facts in PROVIDERS.items():
            for opaque in facts["opaque"]:
                assert (opaque in text) == (OWN.get(fmt) == provider), (fmt, provider, opaque)
            for readable in facts["readable"]:
                assert readable in text, (fmt, provider, readable)
        explicit = gpt_5_6 and fmt.startswith("openai")
        assert ("prompt_cache_options" in request) == explicit, fmt
        assert ("prompt_cache_breakpoint" in text) == explicit, fmt
        assert rendered.ending == (
            "continue_text"
            if finished and fmt in ("anthropic_messages", "gemini_contents")
            else "assistant"
            if finished
            else "user"
        ), (fmt, rendered.ending)
