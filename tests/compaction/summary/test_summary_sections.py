"""One section list for both summarizers (issue 10): fallbacks keep every section, one split heading."""

from __future__ import annotations

import re

from compaction.digest import build_digest
from compaction.planner import plan_compaction
from compaction.summary import ExtractiveSummarizer
from compaction.summary.block import build_summary_block
from compaction.summary.prompt import SPLIT_TURN_INSTRUCTION, SYSTEM_PROMPT
from compaction.summary.sections import (
    SECTIONS,
    SUMMARY_TITLE,
    parse_sections,
    render_sections,
    section_list_text,
    split_turn_body,
)
from tests.builders import Stream
from timeline_app.domain.settings import RenderSettings

ANTHROPIC_SUMMARY = """\
# Conversation summary

## Goals / requests
- Plan a three-day trip to Lisbon in May
## Constraints
- Budget 1,200 EUR, no flights before 9am
## Progress
- Hotel shortlist done (3 options)
## Decisions
- Stay in Alfama: walkable and within budget
## Next steps
- Book the hotel, then look at day trips
## Artifacts
- `trips/shortlist.md` — fs.write
## Critical context
- The user is vegetarian
## Errors
- `tc:t2.tc_2.result`: the booking API timed out once
## Key identifiers
- BKG-20250511-77 (hotel hold, expires Friday)
## Paths and tool calls
- `fi:t2.shortlist.md`
"""

HEADING = re.compile(r"^#{1,4} ", re.M)


def _headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if HEADING.match(line)]


def test_anthropic_prompt_and_extractive_summary_write_the_one_section_list() -> None:
    listed = [line.split(" — ")[0] for line in SYSTEM_PROMPT.splitlines() if line.startswith("## ")]
    assert listed == [s.heading for s in SECTIONS]
    assert SUMMARY_TITLE in SYSTEM_PROMPT and "###" in SPLIT_TURN_INSTRUCTION

    s = Stream()
    s.sized_turn("t3", calls=1)
    text = ExtractiveSummarizer().summarize(
        blocks=s.blocks, previous_summary=ANTHROPIC_SUMMARY, max_tokens=800, purpose="history"
    )
    assert _headings(text) == [SUMMARY_TITLE, *(s.heading for s in SECTIONS)]


def test_extractive_fallback_after_an_anthropic_summary_keeps_every_section() -> None:
    s = Stream()
    for turn in ("t3", "t4", "t5"):
        s.sized_turn(turn, calls=2)
    text = ExtractiveSummarizer().summarize(
        blocks=s.blocks, previous_summary=ANTHROPIC_SUMMARY, max_tokens=800, purpose="history"
    )
    before, after = parse_sections(ANTHROPIC_SUMMARY), parse_sections(text)
    for section in SECTIONS:
        assert before[section.key], section.title
        assert text.count(f"\n{section.heading}\n") == 1, section.title
        assert after[section.key][: len(before[section.key])] == before[section.key], section.title
    assert "- [t5] please do t5" in text


def test_under_budget_pressure_the_fallback_keeps_constraints_progress_and_next_steps() -> None:
    s = Stream()
    for k in range(60):
        s.sized_turn(f"t{k + 3}", calls=2)
    text = ExtractiveSummarizer().summarize(
        blocks=s.blocks, previous_summary=ANTHROPIC_SUMMARY, max_tokens=300, purpose="history"
    )
    for line in (
        "## Constraints\n- Budget 1,200 EUR, no flights before 9am",
        "## Progress\n- Hotel shortlist done (3 options)",
        "## Next steps\n- Book the hotel, then look at day trips",
        "- BKG-20250511-77 (hotel hold, expires Friday)",
    ):
        assert line in text
    assert "## Paths and tool calls" not in text  # paths go first: the digest keeps them


def test_split_turn_summary_has_one_turn_context_heading_whichever_summarizer_wrote_it() -> None:
    settings = RenderSettings(max_tokens=2000, threshold=0.5, keep_recent_tokens=300, summary_max_tokens=300)
    s = Stream()
    s.sized_turn("a")
    s.sized_turn("c", calls=12, result_tokens=80)
    plan = plan_compaction(s.blocks, system_tokens=0, settings=settings)
    assert plan is not None and plan.split_turn_id == "c"
    summarizer = ExtractiveSummarizer()
    history = summarizer.summarize(
        blocks=plan.summarized, previous_summary=None, max_tokens=300, purpose="history"
    )
    llm_split = "# Turn context (split turn)\n\n## Progress\n- searched twelve times\n## Next steps\n- answer"
    for split in (
        summarizer.summarize(
            blocks=plan.split_prefix, previous_summary=None, max_tokens=200, purpose="split_turn"
        ),
        llm_split,
    ):
        text = build_summary_block(
            plan, summary_text=history, split_text=split, digest=build_digest(plan.compacted), turn_id="c"
        )["text"]
        headings = _headings(text)
        assert [h for h in headings if "turn context" in h.lower()] == ["## Turn Context (split turn)"]
        assert [h for h in headings if h.startswith("# ")] == [SUMMARY_TITLE]
        after_split = headings[headings.index("## Turn Context (split turn)") + 1 :]
        assert after_split and all(h.startswith("### ") for h in after_split)
    # the next summary folds the split turn's sections into its own
    folded = parse_sections(text)
    assert folded["progress"][-1] == "- searched twelve times" and folded["next_steps"] == ["- answer"]


def test_parse_sections_exact_routing_of_loose_lines_and_headings() -> None:
    text = (
        "loose line  \n  indented keep\n\n## Progress\np1\n## TURN CONTEXT (t3)\nx\n"
        "## Progress\np2\n# Title\ny\n## Odd heading\nz\n### Deeper\nw"
    )
    out = parse_sections(text)
    assert out["progress"] == ["p1", "p2"]
    assert out["critical"] == [
        "loose line",
        "  indented keep",
        "x",
        "y",
        "### Odd heading",
        "z",
        "### Deeper",
        "w",
    ]
    assert all(not lines for key, lines in out.items() if key not in ("progress", "critical"))


def test_render_sections_exact_layout() -> None:
    assert render_sections("", {}) == "(nothing to summarize)"
    assert render_sections("# T", {}) == "# T\n\n(nothing to summarize)"
    assert render_sections("", {"critical": ["a"]}) == "## Critical context\na"
    assert render_sections("# T", {"critical": ["a"]}, level=3) == "# T\n\n### Critical context\na"


def test_split_turn_body_exact() -> None:
    text = "# Title\n## Turn context\n\n  indented\n## Progress\nline  \n### Keep\nz"
    assert split_turn_body(text) == "  indented\n### Progress\nline\n### Keep\nz"


def test_the_section_list_a_prompt_shows() -> None:
    assert section_list_text().splitlines() == [f"{s.heading} — {s.description}" for s in SECTIONS]
    assert len(SECTIONS) == 10
