"""The operations log's pure rules (``domain.operations``): seqs as merged ranges, the kind filter,
an entry's bounds."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.operations import (
    KINDS,
    MAX_PATHS,
    MAX_RANGES,
    UnknownKinds,
    operation_entry,
    parse_kinds,
    seq_ranges,
    settings_change,
)

SEQS = st.lists(st.integers(min_value=0, max_value=500), max_size=300)
RANGES = st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), max_size=20)


def covered(ranges: list[list[int]]) -> set[int]:
    return {seq for first, last in ranges for seq in range(first, last + 1)}


@given(SEQS, RANGES)
def test_ranges_cover_exactly_the_seqs_sorted_and_apart(seqs, ranges):
    merged = seq_ranges(seqs, ranges)
    wanted = set(seqs) | {s for a, b in ranges if a <= b for s in range(a, b + 1)}
    assert len(merged) <= MAX_RANGES
    if len(merged) < MAX_RANGES:
        assert covered(merged) == wanted
    else:  # capped: the last range runs to the highest seq
        assert covered(merged) >= wanted and merged[-1][1] == max(wanted)
    for (_, last), (first, _) in itertools.pairwise(merged):
        assert first > last + 1, "apart: touching ranges are merged"


def test_the_cap_keeps_the_first_ranges_and_runs_the_last_to_the_end():
    seqs = list(range(0, 2 * (MAX_RANGES + 5), 2))
    merged = seq_ranges(seqs)
    assert len(merged) == MAX_RANGES
    assert merged[: MAX_RANGES - 1] == [[s, s] for s in seqs[: MAX_RANGES - 1]]
    assert merged[-1] == [seqs[MAX_RANGES - 1], seqs[-1]]
    assert len(seq_ranges(seqs[:MAX_RANGES])) == MAX_RANGES  # exactly at the cap: all kept


def test_kinds_repeated_or_comma_listed_in_order_without_duplicates():
    assert parse_kinds(["hidden,unhidden", " hidden ", "ttl_pruned", ""]) == (
        "hidden",
        "unhidden",
        "ttl_pruned",
    )
    assert parse_kinds([]) == ()
    with pytest.raises(UnknownKinds) as refused:
        parse_kinds(["hidden,Hidden", "compaction"])
    assert refused.value.unknown == ["Hidden", "compaction"]


def test_an_entry_caps_its_paths_and_refuses_an_unknown_kind():
    paths = [f"p{n}" for n in range(MAX_PATHS + 3)] + ["p0", ""]
    entry = operation_entry("hidden", actor="", paths=paths, ranges=[(5, 3), (None, 2)])
    assert entry.paths == paths[:MAX_PATHS] and entry.details == {"paths_omitted": 3}
    assert entry.actor == "system" and entry.seq_ranges == []
    exact = operation_entry("hidden", actor="key:x", paths=paths[:MAX_PATHS])
    assert "paths_omitted" not in exact.details
    with pytest.raises(ValueError):
        operation_entry("deleted", actor="system")
    assert len(KINDS) == len(set(KINDS)) == 14


def test_a_settings_change_names_only_what_moved():
    assert settings_change(
        {"max_tokens": 5_000, "threshold": 0.5}, {"max_tokens": 5_000, "budget_note": True}
    ) == {
        "budget_note": [None, True],
        "threshold": [0.5, None],
    }
    assert settings_change({}, {}) == {}
