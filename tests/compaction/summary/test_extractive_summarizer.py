"""The extractive summarizer: deterministic, progressive, complete paths, within max_tokens."""

from __future__ import annotations

import pytest

from compaction.summary import ExtractiveSummarizer, Summarizer, transcript, truncate_to_tokens
from tests.builders import Stream
from timeline_app.domain.blocks import TOOL_RESULT, Block
from timeline_app.domain.tokens import count_text_tokens


def history() -> list[Block]:
    s = Stream()
    s.sized_turn("t1", calls=1)
    s.sized_turn("t2", calls=2)
    s.add(
        TOOL_RESULT,
        tokens=5,
        turn_id="t2",
        author="tool",
        path="tc:t2.tc_err.result",
        text="Error: 404 not found",
    )
    s.add(
        TOOL_RESULT,
        tokens=5,
        turn_id="t2",
        author="tool",
        path="tc:t2.tc_x.result",
        text="ok",
        meta={"status": "error"},
    )
    return s.blocks


def summarize(blocks: list[Block], previous: str | None = None, max_tokens: int = 800) -> str:
    return ExtractiveSummarizer().summarize(
        blocks=blocks, previous_summary=previous, max_tokens=max_tokens, purpose="history"
    )


def test_is_a_summarizer() -> None:
    assert isinstance(ExtractiveSummarizer(), Summarizer)
    assert ExtractiveSummarizer().name == "extractive"


def test_sections_requests_decisions_errors_and_every_path() -> None:
    text = summarize(history())
    assert "## Goals / requests\n- [t1] please do t1\n- [t2] please do t2" in text
    # A completion that gives no reason and says no choice is progress, not a decision.
    assert "## Progress\n- [t1] Done with t1.\n- [t2] Done with t2." in text
    assert "## Errors" in text and "`tc:t2.tc_err.result`: Error: 404 not found" in text
    assert "`tc:t2.tc_x.result`: ok" in text
    for b in history():
        assert b.path in text
    assert "tc_t2_1" in text


def test_is_deterministic() -> None:
    assert summarize(history()) == summarize(history())


def test_progressive_keeps_previous_lines_first() -> None:
    first = summarize(history()[:6])
    s = Stream()
    s.sized_turn("t3")
    second = summarize(s.blocks, previous=first)
    goals = second.split("## Goals / requests\n")[1].split("\n\n")[0].splitlines()
    assert goals == ["- [t1] please do t1", "- [t3] please do t3"]
    assert "tc:t1.tc_t1_0.call" in second  # paths of the earlier summary survive
    assert second.count("## Goals / requests") == 1


def test_previous_sections_stay_in_place_and_foreign_ones_become_critical_context() -> None:
    previous = "## Progress\n- built the parser\n## Budget\n- 300 EUR\n## Goals / requests\n- ship it"
    text = summarize(history()[:3], previous=previous)
    assert "## Goals / requests\n- ship it\n- [t1] please do t1" in text
    assert "## Progress\n- built the parser" in text
    assert "## Critical context\n### Budget\n- 300 EUR" in text
    assert text.index("## Goals / requests") < text.index("## Progress") < text.index("## Critical context")


def test_stays_within_max_tokens_dropping_least_important_first() -> None:
    s = Stream()
    for i in range(200):
        s.sized_turn(f"t{i}", calls=3)
    text = summarize(s.blocks, max_tokens=300)
    assert count_text_tokens(text) <= 300
    assert "- [t0] please do t0" in text  # the original goal is kept
    assert "- [t199] please do t199" in text  # and the latest requests
    assert "## Decisions" not in text  # decisions go first


def test_tiny_budget_truncates() -> None:
    text = summarize(history(), max_tokens=5)
    assert count_text_tokens(text) <= 5


def test_hidden_blocks_contribute_their_replacement_text() -> None:
    b = Block(
        seq=1,
        type="user.prompt",
        author="user",
        turn_id="t1",
        text="secret long prompt",
        path="ar:t1.user.prompt",
    )
    text = summarize([b.hide(replacement_text="[prompt pruned]", reason="ttl", replacement_tokens=3)])
    assert "[prompt pruned]" in text and "secret long prompt" not in text
    assert "`ar:t1.user.prompt` (hidden)" in text


def test_transcript_is_compact_and_trimmed() -> None:
    b = Block(seq=3, type=TOOL_RESULT, author="tool", path="tc:t1.tc_1.result", text="x" * 5000)
    out = transcript([b], per_block_chars=100)
    assert out.startswith("[3] react.tool.result author=tool path=tc:t1.tc_1.result\n")
    assert len(out) < 200


def test_truncate_to_tokens() -> None:
    text = "word " * 1000
    out = truncate_to_tokens(text, 50)
    assert count_text_tokens(out) <= 50 and out.endswith("…")
    assert truncate_to_tokens("short", 50) == "short"


def test_transcript_exact_lines_for_each_kind_of_block() -> None:
    """One header line per block with only the fields it has; a tool call id only when the path
    does not carry it; a status only when it is a non-empty string; hidden blocks show their
    replacement text; binary payloads are named with their caption; bodies are trimmed."""
    blocks = [
        Block(seq=1, type="turn.header", turn_id="t1", author="user"),
        Block(
            seq=2,
            type="react.tool.call",
            turn_id="t1",
            author="assistant",
            path="tc:t1.tc_a.call",
            meta={"tool_call_id": "tc_a"},
            text='{"q": "x"}',
        ),
        Block(
            seq=3,
            type="react.tool.result",
            turn_id="t1",
            meta={"tool_call_id": "tc_b", "status": "error"},
            path="tc:t1.tc_a.result",
            text="  boom  ",
        ),
        Block(
            seq=4,
            type="react.tool.result",
            turn_id="t1",
            hidden=True,
            replacement_text="[pruned]",
            text="secret",
            meta={"status": ""},
        ),
        Block(seq=5, type="user.attachment", mime="image/png", data="aGk=", text="a cat"),
        Block(seq=6, type="user.attachment", data="aGk="),
        Block(seq=7, type="react.notes", text="x" * 50),
    ]
    assert transcript(blocks, per_block_chars=40) == "\n\n".join(
        [
            "[1] turn.header author=user turn=t1",
            '[2] react.tool.call author=assistant turn=t1 path=tc:t1.tc_a.call\n{"q": "x"}',
            "[3] react.tool.result turn=t1 path=tc:t1.tc_a.result tool_call_id=tc_b status=error\nboom",
            "[4] react.tool.result turn=t1 hidden\n[pruned]",
            "[5] user.attachment\n(binary image/png) a cat",
            "[6] user.attachment\n(binary payload)",
            "[7] react.notes\n" + "x" * 39 + "…",
        ]
    )


def _longest_prefix(text: str, max_tokens: int) -> str:
    """The oracle: scan every cut up to the 8-characters-a-token cap, keep the last that fits
    (for texts whose prefixes grow in tokens as they grow in characters, as words do; a run of
    one repeated letter does not, and the binary search then finds a shorter cut)."""
    if count_text_tokens(text) <= max_tokens:
        return text
    cap = min(len(text), max(1, max_tokens) * 8)
    fits = [cut for cut in range(1, cap + 1) if count_text_tokens(text[:cut] + "…") <= max_tokens]
    return text[: fits[-1]].rstrip() + "…" if fits else ""


@pytest.mark.parametrize(
    ("text", "max_tokens"),
    [
        ("word " * 40, 7),
        ("  leading spaces then words and words " * 5, 6),
        ("x", 0),
        ("über straße " * 20, 9),
    ],
)
def test_truncate_to_tokens_keeps_the_longest_prefix_that_fits(text: str, max_tokens: int) -> None:
    assert truncate_to_tokens(text, max_tokens) == _longest_prefix(text, max_tokens)


def test_a_text_of_exactly_the_budget_is_kept_whole() -> None:
    text = "word " * 30
    assert truncate_to_tokens(text, count_text_tokens(text)) == text
