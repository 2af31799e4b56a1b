"""The request head (``rendering.request_head``): one digest and one token count for what precedes
the blocks, built the same way by the render and by the compaction that resends a cached render."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.tokens import count_text_tokens
from timeline_app.rendering.request_head import RequestHead, head_digest, request_head

SYSTEM = "You are a careful agent."


def test_the_digest_is_the_system_prompts_sha256_and_the_tools_size_when_given():
    plain = hashlib.sha256(SYSTEM.encode()).hexdigest()
    assert head_digest(SYSTEM) == plain
    assert head_digest(SYSTEM, tools_tokens=0) == plain
    assert head_digest(SYSTEM, tools_tokens=1) == f"{plain}|tools=1"


def test_a_lone_surrogate_in_the_system_prompt_is_hashed_not_refused():
    assert head_digest("\ud800") == hashlib.sha256("\ud800".encode("utf-8", "surrogatepass")).hexdigest()


def test_the_head_counts_the_system_tokens_unless_the_caller_gave_them():
    assert request_head(system_text=SYSTEM).system_tokens == count_text_tokens(SYSTEM)
    given_head = request_head(system_text=SYSTEM, system_tokens=7, tools_tokens=40, model="m")
    assert (given_head.system_tokens, given_head.tokens, given_head.model) == (7, 47, "m")
    assert request_head(system_tokens=0).system_tokens == 0


def test_only_a_head_without_tools_keeps_its_system_text_for_a_summary_to_resend():
    assert request_head(system_text=SYSTEM).resendable_system_text == SYSTEM
    assert request_head(system_text=SYSTEM, tools_tokens=1).resendable_system_text == ""


def test_a_head_named_by_nobody_seeds_the_fingerprint_with_nothing():
    assert RequestHead().digest == "" and RequestHead().tokens == 0
    assert request_head().digest == hashlib.sha256(b"").hexdigest()  # the API's, without a system prompt


@given(st.text(), st.text(), st.integers(min_value=0, max_value=10**6))
def test_two_heads_share_a_digest_only_when_their_system_prompt_and_tools_do(a, b, tools):
    assert (head_digest(a, tools) == head_digest(b, tools)) == (a == b)
    assert (head_digest(a, tools) == head_digest(a, tools + 1)) is False
