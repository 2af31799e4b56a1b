"""``replay_differences`` (pure, issue 30 defect 0): which fields the client sent differ from the
block stored under the same id; the fields the server fills in count only when sent."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.contributions import REPLAY_FIELDS, NewBlock, replay_differences

STORED = NewBlock(
    type="react.notes",
    author="react",
    turn_id="turn_1",
    ts="2026-01-01T00:00:00Z",
    mime="text/plain",
    text="once",
    data=b"raw",
    path="ar:notes.1",
    meta={"k": 1},
    client_id="n-1",
)
OTHER = {
    "type": "react.plan",
    "author": "user",
    "turn_id": "turn_2",
    "ts": "2026-01-01T00:00:01Z",
    "mime": "text/markdown",
    "text": "twice",
    "data": b"RAW",
    "path": "ar:notes.2",
    "meta": {"k": 2},
}


def test_the_same_block_differs_in_nothing():
    assert replay_differences(stored=STORED, sent=replace(STORED)) == []


@given(st.sets(st.sampled_from(REPLAY_FIELDS)))
def test_every_changed_field_is_named_in_field_order(changed):
    sent = replace(STORED, **{name: OTHER[name] for name in changed})
    assert replay_differences(stored=STORED, sent=sent) == [f for f in REPLAY_FIELDS if f in changed]


def test_the_fields_the_server_fills_in_match_when_left_out():
    sent = replace(STORED, turn_id=None, ts=None, path="")
    assert replay_differences(stored=STORED, sent=sent) == []


def test_fields_with_a_fixed_default_left_out_are_their_default():
    sent = replace(STORED, author="", mime="", text="", data=b"", meta={})
    assert replay_differences(stored=STORED, sent=sent) == ["author", "mime", "text", "data", "meta"]
