"""Identifiers survive summaries (issue 12 point 16): the "Key identifiers" section."""

from __future__ import annotations

import pytest

from compaction.summary import ExtractiveSummarizer
from compaction.summary.sections import identifiers_in, is_identifier, rank_identifiers
from timeline_app.domain.blocks import Block
from timeline_app.domain.tokens import count_text_tokens
from timeline_bench.identifiers import PLANTED, identifier_share, planted_timeline


def test_identifiers_planted_across_blocks_stay_visible_in_the_render_after_compaction() -> None:
    blocks, cut = planted_timeline()
    compacted = "\n".join(b.text for b in blocks[:cut])
    retained = "\n".join(b.text for b in blocks[cut:])
    assert all(i in compacted and i not in retained for i in PLANTED)  # only the summary can carry them

    result = identifier_share()
    assert result.share >= 0.95, result.missing
    assert result.summary_tokens <= result.summary_max_tokens


@pytest.mark.parametrize(
    "token",
    [
        "INV-2024-0042",
        "E4021",
        "ERR_REFUND_WINDOW_CLOSED",
        "txn_8f3a2c91d",
        "9f86d081884c7d65",
        "/var/log/app.log",
        "docs/runbooks/refunds.md",
        "report.pdf",
        "https://tickets.example.com/browse/OPS-1187",
        "#4521",
        "1234567",
        "ops@example.com",
        # bench quality's misses (issue 24): DOIs, pytest node ids, booking locators.
        "10.6742/refund.2019.4161",
        "tests/export/test_session.py::test_churn_forecast",
        "GNIBPH",
        "notebooks/churn_analysis.ipynb",
    ],
)
def test_identifier_shapes_are_recognised(token: str) -> None:
    assert is_identifier(token)
    assert identifiers_in(f"see ({token}), please.") == [token]


@pytest.mark.parametrize(
    "token",
    [
        "t1",
        "2026-02-09T02:14:32Z",
        "12:30",
        "100ms",
        "10th",
        "and/or",
        "2024",
        "ar:t1.user.prompt",
        "tc_abc1",
    ],
)
def test_words_dates_quantities_and_block_paths_are_not_identifiers(token: str) -> None:
    assert not is_identifier(token)


def test_ranking_is_most_referenced_then_most_recent() -> None:
    texts = ["A-1 and B-2", "B-2 then C-3", "D-4"]
    assert rank_identifiers(texts) == ["B-2", "D-4", "C-3", "A-1"]
    assert rank_identifiers(texts) == rank_identifiers(list(texts))  # deterministic


def test_a_tight_budget_keeps_the_best_ranked_identifiers() -> None:
    blocks = [
        Block(seq=k + 1, type="react.tool.result", author="tool", text=f"found ORD-{1000 + k} (see ORD-1000)")
        for k in range(120)
    ]
    text = ExtractiveSummarizer().summarize(
        blocks=blocks, previous_summary=None, max_tokens=120, purpose="history"
    )
    assert count_text_tokens(text) <= 120
    kept = [line[2:] for line in text.split("## Key identifiers\n")[1].splitlines()]
    ranking = rank_identifiers(b.text for b in blocks)
    assert ranking[0] == "ORD-1000"  # the most referenced
    assert kept == ranking[: len(kept)] and 5 <= len(kept) < len(ranking)


def test_identifiers_survive_a_second_compaction_and_keep_their_previous_lines() -> None:
    blocks, cut = planted_timeline()
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(
        blocks=blocks[:cut], previous_summary=None, max_tokens=800, purpose="history"
    )
    previous = first.replace("- txn_8f3a2c91d\n", "- txn_8f3a2c91d (settled INV-2024-0042)\n")
    assert previous != first
    second = summarizer.summarize(
        blocks=blocks[cut:], previous_summary=previous, max_tokens=800, purpose="history"
    )
    assert count_text_tokens(second) <= 800
    assert "- txn_8f3a2c91d (settled INV-2024-0042)" in second  # a previous line is kept verbatim
    assert sum(i in second for i in PLANTED) >= 19


# Every branch of the file-path rule, one token each (absolute prefixes, drive letters, the
# segments that do not count, extensions, the segment counts), pinned exactly.
@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("/etc/hosts", True),
        ("/etc", False),
        ("etc/hosts", False),
        ("etc/nginx/conf", True),
        ("~/notes", False),
        ("~/notes.md", True),
        ("~/a/b", True),
        ("./build/out", True),
        ("./build", False),
        ("./app.py", True),
        ("../x/y", True),
        ("../x", False),
        ("x/./y", False),
        ("x/../y", False),
        ("x/../y/z", True),
        ("///", False),
        ("C:\\Users\\me", True),
        ("C:\\Users", False),
        ("C:\\report.pdf", True),
        ("D:/data/x", False),
        ("src/app.py", True),
        ("a.b/c.d/e", True),
        ("/1/2", False),
        ("/usr/2024", True),
        ("/tmp/..", False),
        ("docs\\guide\\intro", True),
        ("reports/q3.PDF", True),
        ("reports/q3.exe", False),
        ("/srv/a$b/c", False),
        ("./.env", False),
        ("http://example.com/x", True),
        ("#1234", True),
        ("#123", True),
        ("#12", False),
        ("12345", True),
        ("1234", False),
        ("#abcd", False),
        ("#a123", False),
        ("a1" * 100, True),
        ("a1" * 100 + "a", False),
        ("archive.tar.gz", True),
        ("notes.docs", False),
        ("12345.678", False),
    ],
)
def test_file_path_rule(token: str, expected: bool) -> None:
    assert is_identifier(token) is expected


def test_identifiers_lose_trailing_punctuation() -> None:
    assert identifiers_in("Ref: INV-2024-0042. Then E4021!") == ["INV-2024-0042", "E4021"]


def test_two_word_references_to_figures_and_tables_are_identifiers() -> None:
    assert identifiers_in("Update Figure 10c and Table 4 from q_71fa958e; see figure two.") == [
        "Figure 10c",
        "Table 4",
        "q_71fa958e",
    ]
