"""``rendering.meta.meta_problem``: the byte cap is exactly the canonical JSON's UTF-8 length (a
stored OpenAI message left out), keys count at every level, depth counts the meta as 1."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from timeline_app.domain.meta import MetaLimits, meta_problem

BIG = 10**9
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30
)
metas = st.dictionaries(st.text().filter(lambda k: k != "openai_message"), json_values, max_size=8)


def canonical_bytes(value: object) -> int:
    return len(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())


@given(metas)
def test_the_byte_cap_is_the_canonical_json_length(meta):
    size = canonical_bytes(meta)
    assert meta_problem(meta, MetaLimits(max_bytes=size, max_keys=BIG, max_depth=BIG)) is None
    assert meta_problem(meta, MetaLimits(max_bytes=size - 1, max_keys=BIG, max_depth=BIG)) == (
        f"more than {size - 1} bytes of JSON"
    )


def test_keys_count_at_every_level_and_depth_counts_the_meta_itself():
    meta = {"a": {"b": {"c": 1}}, "d": [{"e": 1}]}  # 5 keys, 3 levels
    assert meta_problem(meta, MetaLimits(max_bytes=BIG, max_keys=5, max_depth=3)) is None
    assert "more than 4 keys" in str(meta_problem(meta, MetaLimits(max_bytes=BIG, max_keys=4, max_depth=3)))
    assert "deeper than 2" in str(meta_problem(meta, MetaLimits(max_bytes=BIG, max_keys=5, max_depth=2)))


def test_a_stored_message_counts_its_keys_and_depth_but_not_its_bytes():
    meta = {"openai_message": {"role": "user", "content": "w" * 10_000}, "message_id": "m1"}
    without = canonical_bytes({"openai_message": None, "message_id": "m1"}) - len("null")
    assert meta_problem(meta, MetaLimits(max_bytes=without, max_keys=4, max_depth=2)) is None
    assert meta_problem(meta, MetaLimits(max_bytes=without, max_keys=3, max_depth=2)) is not None
    assert meta_problem(
        {"openai_message": {"x": "w" * 10}}, MetaLimits(max_bytes=30, max_keys=9, max_depth=1)
    )
