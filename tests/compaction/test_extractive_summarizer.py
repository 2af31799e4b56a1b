"""The extractive summarizer: deterministic, progressive, complete paths, within max_tokens."""

from __future__ import annotations

from compaction.summarizers import ExtractiveSummarizer, Summarizer, transcript, truncate_to_tokens
from tests.compaction.factories import Stream
from timeline_app.rendering.blocks import TOOL_RESULT, Block
from timeline_app.rendering.tokens import count_text_tokens


def history() -> list[Block]:
    s = Stream()
    s.turn("t1", calls=1)
    s.turn("t2", calls=2)
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
    assert "## Decisions\n- [t1] Done with t1.\n- [t2] Done with t2." in text
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
    s.turn("t3")
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
        s.turn(f"t{i}", calls=3)
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
