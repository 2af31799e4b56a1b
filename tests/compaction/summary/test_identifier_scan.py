"""The identifier scan skips plain words in the regular expression (``bench engine``: they were
most of the extractive summary's time); it finds exactly what a word-by-word scan finds."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from compaction.summary.sections import _REFERENCE, _STRIP, identifiers_in, is_identifier

_WORD = re.compile(r"[^\s,;()\[\]{}<>\"'`|=]+")


def word_by_word(text: str) -> list[str]:
    """The scan before the plain-word skip: every word through :func:`is_identifier`."""
    found: list[tuple[int, str]] = []
    for match in _WORD.finditer(text):
        token = match.group().strip(_STRIP)
        if token and is_identifier(token):
            found.append((match.start(), token))
    found.extend((match.start(), match.group()) for match in _REFERENCE.finditer(text))
    return [token for _, token in sorted(found, key=lambda pair: pair[0])]


_PIECES = st.sampled_from(
    [
        "result",
        "Result.",
        "The",
        "GNIBPH",
        "ABCDEFGHI",
        "INV-2024-0042",
        "E4021",
        "x²",
        "²²²²²",
        "report.pdf",
        "Figure 3a",
        "Fig. 2",
        "Table",
        "12",
        "#4521",
        "ops@example.com",
        "a/b/c",
        "s3://bucket/x.parquet",
        "ERR_X",
        "tc_1",
        "fi:x.txt",
        "café",
        "*done*",
        "word:",
        "https://a.io/x",
        " ",
        "  ",
        ",",
        "(",
        ")",
        "\n",
        "'",
        '"',
        "|",
        "=",
        ".",
        ":",
        "!",
        "?",
        "*",
        "_",
        "-",
        "/",
    ]
)


@given(st.lists(_PIECES | st.text(max_size=6), max_size=40).map("".join))
def test_the_scan_finds_what_a_word_by_word_scan_finds(text: str) -> None:
    assert identifiers_in(text) == word_by_word(text)


def test_plain_words_are_skipped_and_identifiers_among_them_found() -> None:
    text = "result " * 500 + "The order INV-2024-0042 failed; see Figure 3a and GNIBPH. " + "Done. " * 100
    assert identifiers_in(text) == ["INV-2024-0042", "Figure 3a", "GNIBPH"]
