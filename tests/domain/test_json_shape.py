"""``json_shape_problem`` (pure, issue 30 defect 4): the caps read from the raw bytes before
parsing agree with the same caps computed on the parsed value, at every boundary, whatever the
strings hold (quotes, backslashes, braces, colons and commas inside strings are no structure)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from timeline_app.domain.json_shape import ShapeLimits, json_shape_problem

LIMITS = ShapeLimits(max_depth=4, max_keys=5, max_items=6)

tricky_text = st.text(alphabet='ab"\\{}[]:, \n\u00e9\U0001f600', max_size=6)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), tricky_text),
    lambda inner: st.one_of(st.lists(inner, max_size=8), st.dictionaries(tricky_text, inner, max_size=7)),
    max_leaves=40,
)


def reference(value: Any, limits: ShapeLimits) -> bool:
    """True when ``value`` is within the caps, computed on the parsed value."""

    def keys_inside(node: Any) -> int:
        if isinstance(node, dict):
            return len(node) + sum(keys_inside(child) for child in node.values())
        if isinstance(node, list):
            return sum(keys_inside(child) for child in node)
        return 0

    def within(node: Any, depth: int, root: bool) -> bool:
        if not isinstance(node, dict | list):
            return True
        if depth > limits.max_depth or len(node) > (
            limits.max_keys if isinstance(node, dict) else limits.max_items
        ):
            return False
        if isinstance(node, dict) and not root and keys_inside(node) > limits.max_keys:
            return False
        children = node.values() if isinstance(node, dict) else node
        return all(within(child, depth + 1, False) for child in children)

    return within(value, 1, True)


@settings(max_examples=400)
@given(values)
def test_the_scan_agrees_with_the_caps_on_the_parsed_value(value):
    raw = json.dumps(value, ensure_ascii=False).encode()
    assert (json_shape_problem(raw, LIMITS) is None) == reference(value, LIMITS)


def test_each_cap_at_its_boundary():
    limits = ShapeLimits(max_depth=3, max_keys=3, max_items=3)

    def ok(value: Any) -> bool:
        return json_shape_problem(json.dumps(value).encode(), limits) is None

    assert ok({"a": 1, "b": 2, "c": 3}) and not ok({"a": 1, "b": 2, "c": 3, "d": 4})
    assert ok([1, 2, 3]) and not ok([1, 2, 3, 4])
    assert ok([[[1]]]) and not ok([[[[1]]]])
    # Inside the body: keys at every level of one object count together.
    assert ok({"meta": {"a": {"b": 1}, "c": 1}}) and not ok({"meta": {"a": {"b": 1, "d": 1}, "c": 1}})
    assert ok({"k": [{"a": 1, "b": 1}, {"c": 1, "d": 1}]}), "the body's own subtree is not capped"


def test_two_million_keys_are_refused_after_reading_only_the_first():
    raw = b'{"blocks":[{"meta":{' + b",".join(b'"k%07d":0' % i for i in range(2_000_000)) + b"}}]}"
    assert json_shape_problem(raw, ShapeLimits(max_depth=32, max_keys=1064, max_items=100_000)) == (
        "an object holds more than 1064 keys"
    )


def test_not_json_is_left_to_the_parser():
    limits = ShapeLimits(max_depth=3, max_keys=3, max_items=3)
    assert json_shape_problem(b"}}}", limits) is None
    assert json_shape_problem(b":::", limits) is None
    assert json_shape_problem(b'"unterminated', limits) is None
