"""The front of every write of new blocks (``domain.block_rules.checked_blocks``): default authors
filled in, then one 400 per kind of problem, the first kind found, naming every block of it."""

from __future__ import annotations

import pytest

from timeline_app.domain import blocks as b
from timeline_app.domain.block_rules import checked_blocks
from timeline_app.domain.contributions import NewBlock
from timeline_app.errors import InvalidInput

CALL = {"tool_call_id": "tc_1"}


def refused(blocks: list[NewBlock]) -> tuple[str, dict[str, str]]:
    with pytest.raises(InvalidInput) as caught:
        checked_blocks(blocks)
    return caught.value.message, caught.value.details


def test_a_block_without_an_author_gets_its_types_default_and_one_with_an_author_keeps_it():
    blocks = [
        NewBlock(type=b.TOOL_RESULT, meta=CALL),
        NewBlock(type=b.TOOL_RESULT, author="  ", meta=CALL),
        NewBlock(type="acme.custom"),
        NewBlock(type=b.NOTES, author="planner"),
    ]
    assert [nb.author for nb in checked_blocks(blocks)] == ["tool", "tool", "user", "planner"]
    assert blocks[0].author == ""  # the request's values are left as sent


def test_every_block_lacking_what_its_type_needs_is_named_by_its_index():
    message, details = refused(
        [NewBlock(type=b.TOOL_CALL, meta=CALL), NewBlock(type=b.TOOL_CALL), NewBlock(type=b.TOOL_RESULT)]
    )
    assert message == "a block lacks what its type needs"
    assert set(details) == {"blocks[1].meta.tool_call_id", "blocks[2].meta.tool_call_id"}


def test_a_lack_is_reported_before_a_duplicate_id_and_a_duplicate_before_a_summary():
    lacking = NewBlock(type=b.TOOL_CALL, client_id="x")
    assert refused([lacking, NewBlock(type=b.NOTES, client_id="x")])[0] == "a block lacks what its type needs"
    duplicate = [NewBlock(type=b.NOTES, client_id="x"), NewBlock(type=b.SUMMARY, client_id="x")]
    assert refused(duplicate) == ("the same block id appears twice in one request", {"id": "duplicate"})


def test_a_summary_block_is_refused_alone_and_blocks_without_ids_may_repeat():
    assert checked_blocks([NewBlock(type=b.NOTES), NewBlock(type=b.NOTES)])
    assert refused([NewBlock(type=b.NOTES), NewBlock(type=b.SUMMARY)]) == (
        "conv.range.summary blocks are written by compaction only",
        {"type": b.SUMMARY},
    )


def test_a_thinking_block_by_the_user_is_named_under_its_meta_path():
    message, details = refused([NewBlock(type=b.NOTES), NewBlock(type=b.THINKING, author="user", text="hm")])
    assert message == "a thinking block does not have its provider's shape"
    assert details and all(key.startswith("blocks[1].") for key in details)
