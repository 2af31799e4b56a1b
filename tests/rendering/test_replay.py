"""The window shape a render record keeps for the admin's past-render view (``replay.py``): packed
seq sets round-trip at a documented cost, and a shape gives back the window it was taken from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.blocks import SUMMARY, Block
from timeline_app.rendering.window_shape import (
    pack_seq_set,
    unpack_seq_runs,
    unpack_seq_set,
    window_of,
    window_shape,
)


@given(st.sets(st.integers(min_value=0, max_value=2**40)))
def test_a_packed_seq_set_round_trips(seqs):
    assert unpack_seq_set(pack_seq_set(sorted(seqs))) == tuple(sorted(seqs))


def test_the_cost_is_a_byte_or_two_per_seq_and_nothing_for_a_window_without():
    assert pack_seq_set([]) == b""
    scattered = list(range(1000, 51_000, 10))  # 5,000 seqs 10 apart: ≤ 1 byte each
    assert len(pack_seq_set(scattered)) <= len(scattered) + 1
    wide = list(range(0, 5_000 * 1_000, 1_000))  # gaps under 16,384: ≤ 2 bytes each
    assert len(pack_seq_set(wide)) <= 2 * len(wide) + 1
    assert len(pack_seq_set(range(50_000))) < 200  # a run deflates


def test_a_shape_gives_back_its_window_with_the_hide_state_it_had():
    stored = [Block(seq=seq, type="x", path=f"p{seq}", hidden=seq == 7) for seq in range(1, 13)]
    summary = Block(seq=9, type=SUMMARY, hidden=True)
    stored[8] = summary
    window = [summary, *(b for b in stored if b.seq in {3, 4, 6, 7, 10, 12})]
    window = [Block(seq=b.seq, type=b.type, path=b.path, hidden=b.seq in {4, 9}) for b in window]
    shape = window_shape(window)
    assert (shape.summary_seq, shape.first_seq, shape.last_seq, shape.hidden_count) == (9, 3, 12, 2)
    assert unpack_seq_runs(shape.skipped_seqs) == ((5, 5), (8, 9), (11, 11))
    rebuilt, problems = window_of(stored, shape)
    assert problems == []
    assert [(b.seq, b.hidden) for b in rebuilt] == [(b.seq, b.hidden) for b in window]

    rebuilt, problems = window_of([b for b in stored if b.seq != 10], shape)
    assert problems == ["stored blocks missing: seq 10"]


def test_a_window_whose_seqs_span_an_imports_gaps_records_them_as_runs():
    # An import keeps its seqs: a window of three blocks may span 2^63 seqs. The shape must not
    # enumerate the span (it did, and a render of such a context ran out of memory).
    seqs = [1, 2, 2**53, 2**62, 2**63 - 2]
    window = [Block(seq=seq, type="x", path=f"p{seq}") for seq in seqs]
    shape = window_shape(window)
    assert unpack_seq_runs(shape.skipped_seqs) == (
        (3, 2**53 - 1),
        (2**53 + 1, 2**62 - 1),
        (2**62 + 1, 2**63 - 3),
    )
    assert len(shape.skipped_seqs) < 40
    rebuilt, problems = window_of(window, shape)
    assert problems == []
    assert [b.seq for b in rebuilt] == seqs
    rebuilt, problems = window_of([b for b in window if b.seq != 2**62], shape)
    assert problems == [f"stored blocks missing: seq {2**62}"]
