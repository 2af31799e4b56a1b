"""The admin's digest tables read ``meta.compaction_digest`` through the one tolerant reader
(``compaction.digest.read_digest``), one table per digest key."""

from __future__ import annotations

from compaction.digest import DIGEST_KEYS, build_digest
from timeline_app.admin.sections import digest_tables
from timeline_app.domain.blocks import TOOL_RESULT, Block


def test_a_digest_shows_one_table_per_key_in_the_digest_order() -> None:
    result = Block(
        seq=3,
        type=TOOL_RESULT,
        author="tool",
        path="tc:t1.tc_1.result",
        mime="text/plain",
        text="x",
        meta={"tool_id": "fs.read", "status": "ok", "sources_used": [1, 2]},
    )
    tables = digest_tables(build_digest([result]))
    assert tuple(tables) == DIGEST_KEYS
    assert tables["tool_outputs"].rows == [
        {"tool_id": "fs.read", "tool_call_id": "tc_1", "path": "tc:t1.tc_1.result", "status": "ok"}
    ]
    assert tables["artifacts"].rows[0]["sources_used"] == "1, 2"
    assert tables["paths"].rows == ["tc:t1.tc_1.result"]


def test_a_malformed_digest_shows_what_the_reader_keeps() -> None:
    malformed = {
        "artifacts": "not a list",
        "tool_outputs": {"b.tool": [{"tool_call_id": "tc_2"}, "junk"], "a.tool": "junk"},
        "memsearch": [{"query": "q", "paths": ["p1", "p2"]}, 7],
        "tool_call_ids": ["tc_1", 5, None],
        # "hidden" and "paths" missing
    }
    tables = digest_tables(malformed)
    assert tuple(tables) == DIGEST_KEYS
    assert tables["artifacts"].rows == [] and tables["hidden"].rows == [] and tables["paths"].rows == []
    assert tables["tool_outputs"].rows == [{"tool_id": "b.tool", "tool_call_id": "tc_2"}]
    assert tables["memsearch"].rows == [{"query": "q", "paths": "p1, p2"}]
    assert tables["tool_call_ids"].rows == ["tc_1"]
    assert digest_tables(None)["paths"].rows == []
