"""The one ellipsis rule (``rendering.text``) used by the admin, the summarizers and the TTL hints."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.text import ellipsize, one_line


def test_text_that_fits_is_returned_unchanged() -> None:
    assert ellipsize("dinner at eight", 15) == "dinner at eight"
    assert one_line("dinner\n  at\teight", 15) == "dinner at eight"


def test_cut_text_ends_with_an_ellipsis_and_no_dangling_space() -> None:
    assert ellipsize("dinner at eight", 8) == "dinner…"
    assert ellipsize("dinner at eight", 11) == "dinner at…"
    assert ellipsize("abc", 0) == "…"


def test_one_line_marks_a_huge_text_as_cut_even_when_the_part_read_is_short() -> None:
    text = "word" + " " * 1000 + "tail"
    assert one_line(text, 20) == "word…"


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_ellipsize_never_exceeds_the_limit_and_keeps_a_prefix(text: str, limit: int) -> None:
    out = ellipsize(text, limit)
    assert len(out) <= limit
    if out != text:
        assert out.endswith("…") and text.startswith(out[:-1])


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_one_line_is_one_line_within_the_limit(text: str, limit: int) -> None:
    out = one_line(text, limit)
    assert len(out) <= limit
    assert not any(c.isspace() and c != " " for c in out)
    if len(" ".join(text.split())) <= limit and len(text) <= limit * 2 + 16:
        assert out == " ".join(text.split())


def test_one_line_reads_exactly_two_limits_and_sixteen_characters() -> None:
    assert one_line("a" + " " * 34 + "bcd", 10) == "a b…"  # "b" is character 36: read
    assert one_line("a" + " " * 35 + "bcd", 10) == "a…"  # "b" is character 37: not read
