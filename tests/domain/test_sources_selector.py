"""The ``so:sources_pool[…]`` selector grammar (pure): sids and ranges, comma-separated."""

from __future__ import annotations

import pytest

from timeline_app.domain.blocks import SelectorError, parse_sources_selector, sources_pool_path


def test_terms_are_kept_once_in_written_order_and_other_paths_are_no_selector() -> None:
    selector = parse_sources_selector("so:sources_pool[6, 3,5-6,3]")
    assert selector is not None and selector.terms == ((6, 6), (3, 3), (5, 6))
    for path in ("ar:t1.user.prompt", "so:sources_pool_notes", "so:other[1]"):
        assert parse_sources_selector(path) is None


def test_the_pool_path_a_render_shows_parses() -> None:
    for first, last in ((1, 1), (1, 9)):
        selector = parse_sources_selector(sources_pool_path(first, last))
        assert selector is not None and selector.terms == ((first, last),)


def test_unknown_terms_name_sids_and_ranges_without_any_source() -> None:
    selector = parse_sources_selector("so:sources_pool[2,9,5-6,20-30,9]")
    assert selector is not None
    assert selector.unknown_terms({1, 2, 3, 6}) == ["9", "20-30"]
    assert selector.unknown_terms([2, 9, 5, 25]) == []


@pytest.mark.parametrize(
    "path", ["so:sources_pool", "so:sources_pool[]", "so:sources_pool[1,,2]", "so:sources_pool[2-1]"]
)
def test_malformed_selectors_raise_with_details(path: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_sources_selector(path)
    assert "path" in caught.value.details


SYNTAX = "so:sources_pool[<sid or first-last>,…], e.g. so:sources_pool[3,5-6]"


@pytest.mark.parametrize(
    ("path", "message", "details"),
    [
        ("so:sources_pool", f"malformed sources selector; expected {SYNTAX}", {"path": SYNTAX}),
        ("so:sources_pool[1,,2]", f"malformed term ''; expected {SYNTAX}", {"path": SYNTAX}),
        ("so:sources_pool[ 7-3 ]", "descending range '7-3'", {"path": "a range is first-last: 7-3"}),
        (
            f"so:sources_pool[1-{2**31}]",
            f"sid {2**31} out of range",
            {"path": f"sids are below 2^31: 1-{2**31}"},
        ),
        (
            "so:sources_pool[" + ",".join(["1"] * 101) + "]",
            "a sources selector has at most 100 terms",
            {"path": "at most 100 terms"},
        ),
    ],
)
def test_each_malformed_selector_says_exactly_what_is_wrong(path: str, message: str, details: dict) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_sources_selector(path)
    assert (str(caught.value), caught.value.details) == (message, details)


def test_the_limits_themselves_are_allowed() -> None:
    top = 2**31 - 1
    selector = parse_sources_selector(f"so:sources_pool[{top}, 1-{top}]")
    assert selector is not None and selector.terms == ((top, top), (1, top))
    hundred = parse_sources_selector("so:sources_pool[" + ",".join(str(i) for i in range(1, 101)) + "]")
    assert hundred is not None and len(hundred.terms) == 100
