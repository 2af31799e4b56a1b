"""The compaction digest (seed 002 "Compaction Digest"): complete, cumulative, deterministic."""

from __future__ import annotations

import json
from dataclasses import asdict

from compaction.digest import DIGEST_KEYS, Digest, build_digest, read_digest
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    TOOL_CALL,
    TOOL_RESULT,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)


def blocks() -> list[Block]:
    return [
        Block(seq=1, type=USER_PROMPT, turn_id="t1", author="user", path="ar:t1.user.prompt", text="hi"),
        Block(
            seq=2,
            type=USER_ATTACHMENT,
            turn_id="t1",
            author="user",
            path="fi:t1.user.attachments/a.pdf",
            mime="application/pdf",
        ),
        Block(
            seq=3,
            type=TOOL_CALL,
            turn_id="t1",
            author="assistant",
            path="tc:t1.tc_1.call",
            meta={"tool_id": "web_search"},
        ),
        Block(
            seq=4,
            type=TOOL_RESULT,
            turn_id="t1",
            author="tool",
            path="tc:t1.tc_1.result",
            mime="application/json",
            meta={"tool_id": "web_search"},
        ),
        Block(
            seq=5,
            type=TOOL_RESULT,
            turn_id="t1",
            author="tool",
            path="fi:t1.files/report.md",
            mime="text/markdown",
            meta={"tool_id": "writer", "tool_call_id": "tc_2", "sources_used": [1, 3], "status": "error"},
        ),
        Block(
            seq=6,
            type=TOOL_RESULT,
            turn_id="t1",
            author="tool",
            path="tc:t1.tc_3.result",
            mime="application/json",
            meta={"tool_id": "ctx.memsearch", "query": "budget", "paths": ["ar:t0.user.prompt", "fi:t0.x"]},
        ),
        Block(
            seq=7,
            type=ASSISTANT_COMPLETION,
            turn_id="t1",
            author="assistant",
            path="ar:t1.assistant.completion",
        ),
        Block(seq=8, type=TOOL_RESULT, turn_id="t1", author="tool", path="tc:t1.tc_4.result"),
    ]


def test_digest_lists_artifacts_tool_outputs_memsearch_ids_and_paths() -> None:
    d = build_digest(blocks())
    assert d["artifacts"] == [
        {
            "path": "fi:t1.user.attachments/a.pdf",
            "mime": "application/pdf",
            "visibility": "visible",
            "sources_used": [],
        },
        {
            "path": "fi:t1.files/report.md",
            "mime": "text/markdown",
            "visibility": "visible",
            "sources_used": [1, 3],
        },
        {"path": "tc:t1.tc_4.result", "mime": "", "visibility": "visible", "sources_used": []},
    ]
    assert d["tool_outputs"] == {
        "ctx.memsearch": [{"tool_call_id": "tc_3", "path": "tc:t1.tc_3.result", "status": "ok"}],
        "unknown": [{"tool_call_id": "tc_4", "path": "tc:t1.tc_4.result", "status": "ok"}],
        "web_search": [{"tool_call_id": "tc_1", "path": "tc:t1.tc_1.result", "status": "ok"}],
        "writer": [{"tool_call_id": "tc_2", "path": "fi:t1.files/report.md", "status": "error"}],
    }
    assert d["memsearch"] == [
        {"tool_call_id": "tc_3", "query": "budget", "hits": 2, "paths": ["ar:t0.user.prompt", "fi:t0.x"]}
    ]
    assert d["tool_call_ids"] == ["tc_1", "tc_2", "tc_3", "tc_4"]
    assert d["paths"] == [b.path for b in blocks()]
    assert d["hidden"] == []


def test_digest_includes_hidden_blocks() -> None:
    bs = blocks()
    bs[3] = bs[3].hide(
        replacement_text="[search results pruned; read tc:t1.tc_1.result]", reason="ttl", replacement_tokens=9
    )
    bs[4] = bs[4].hide(replacement_text="[report pruned]", reason="manual", replacement_tokens=3)
    d = build_digest(bs)
    assert d["hidden"] == [
        {
            "path": "tc:t1.tc_1.result",
            "replacement_text": "[search results pruned; read tc:t1.tc_1.result]",
            "reason": "ttl",
        },
        {"path": "fi:t1.files/report.md", "replacement_text": "[report pruned]", "reason": "manual"},
    ]
    assert {
        "path": "fi:t1.files/report.md",
        "mime": "text/markdown",
        "visibility": "hidden",
        "sources_used": [1, 3],
    } in d["artifacts"]


def test_digest_is_cumulative_with_the_previous_summary_digest() -> None:
    first = build_digest(blocks()[:4])
    later = [
        Block(seq=9, type=TOOL_CALL, turn_id="t2", author="assistant", path="tc:t2.tc_9.call"),
        Block(
            seq=10,
            type=TOOL_RESULT,
            turn_id="t2",
            author="tool",
            path="fi:t2.out.png",
            mime="image/png",
            meta={"tool_id": "web_search", "tool_call_id": "tc_9"},
        ),
        Block(seq=11, type=USER_PROMPT, turn_id="t2", author="user", path="ar:t2.user.prompt").hide(
            replacement_text="[prompt hidden]", reason="ttl", replacement_tokens=2
        ),
    ]
    # Round-trip through JSON as the stored digest would.
    d = build_digest(later + blocks()[2:4], previous=json.loads(json.dumps(first)))
    assert d["paths"] == [*first["paths"], "tc:t2.tc_9.call", "fi:t2.out.png", "ar:t2.user.prompt"]
    assert d["tool_call_ids"] == ["tc_1", "tc_9"]
    assert d["tool_outputs"]["web_search"] == [
        {"tool_call_id": "tc_1", "path": "tc:t1.tc_1.result", "status": "ok"},
        {"tool_call_id": "tc_9", "path": "fi:t2.out.png", "status": "ok"},
    ]
    assert [a["path"] for a in d["artifacts"]] == ["fi:t1.user.attachments/a.pdf", "fi:t2.out.png"]
    assert d["hidden"] == [
        {"path": "ar:t2.user.prompt", "replacement_text": "[prompt hidden]", "reason": "ttl"}
    ]


def test_every_compacted_path_tool_call_and_hidden_block_appears() -> None:
    bs = [
        Block(
            seq=i,
            type=TOOL_RESULT if i % 2 else TOOL_CALL,
            path=f"tc:t.tc_{i // 2}.{'result' if i % 2 else 'call'}",
        )
        for i in range(40)
    ]
    bs = [
        b.hide(replacement_text=f"h{b.seq}", reason="ttl", replacement_tokens=1) if b.seq % 3 == 0 else b
        for b in bs
    ]
    d = build_digest(bs)
    assert set(d["paths"]) == {b.path for b in bs}
    assert set(d["tool_call_ids"]) == {b.tool_call_id for b in bs}
    assert {h["path"] for h in d["hidden"]} == {b.path for b in bs if b.hidden}


def test_digest_is_deterministic_and_json_serialisable() -> None:
    a = json.dumps(build_digest(blocks()), sort_keys=True)
    b = json.dumps(build_digest(list(blocks())), sort_keys=True)
    assert a == b
    assert json.loads(a)["tool_call_ids"] == ["tc_1", "tc_2", "tc_3", "tc_4"]


def test_garbage_previous_digest_is_ignored_safely() -> None:
    d = build_digest(blocks()[:1], previous={"artifacts": "nope", "tool_outputs": [], "paths": [1, "ar:x"]})
    assert d["paths"] == ["ar:x", "ar:t1.user.prompt"]


def test_read_digest_reads_every_field_and_drops_entries_of_the_wrong_type() -> None:
    stored = {
        "artifacts": [{"path": "fi:t1.a.pdf"}, "junk"],
        "tool_outputs": {"web": [{"tool_call_id": "tc_1"}, 3], 7: [{"tool_call_id": "tc_2"}]},
        "memsearch": [{"query": "q"}, None],
        "hidden": [{"path": "ar:t1.note"}, []],
        "tool_call_ids": ["tc_1", 5],
        "paths": ["ar:t1.user.prompt", {"x": 1}],
    }
    assert read_digest(stored) == Digest(
        artifacts=[{"path": "fi:t1.a.pdf"}],
        tool_outputs={"web": [{"tool_call_id": "tc_1"}], "7": [{"tool_call_id": "tc_2"}]},
        memsearch=[{"query": "q"}],
        hidden=[{"path": "ar:t1.note"}],
        tool_call_ids=["tc_1"],
        paths=["ar:t1.user.prompt"],
    )
    assert read_digest(None) == read_digest({"tool_outputs": []}) == read_digest(asdict(Digest())) == Digest()


def test_merging_a_previous_digest_dedupes_each_section_by_its_whole_key() -> None:
    """Entries are one per key (a later entry updates the earlier one); entries that differ in
    any field of the key stay apart: tool outputs by (tool_call_id, path), memsearch by
    (tool_call_id, paths, query), hidden blocks by path, or by their text when they have none."""
    previous = {
        "tool_outputs": {
            "web": [
                {"tool_call_id": "tc_1", "path": "x", "status": "ok"},
                {"tool_call_id": "tc_2", "path": "x", "status": "ok"},
                {"tool_call_id": "tc_1", "path": "y", "status": "ok"},
                {"tool_call_id": "tc_1", "path": "x", "status": "error"},
            ]
        },
        "memsearch": [
            {"tool_call_id": "tc_1", "paths": ["a"], "query": "q", "hits": 1},
            {"tool_call_id": "tc_2", "paths": ["a"], "query": "q", "hits": 1},
            {"tool_call_id": "tc_1", "paths": ["b"], "query": "q", "hits": 1},
            {"tool_call_id": "tc_1", "paths": ["a"], "query": "r", "hits": 1},
            {"tool_call_id": "tc_1", "paths": ["a"], "query": "q", "hits": 2},
        ],
        "hidden": [
            {"path": "ar:t1.note", "replacement_text": "one"},
            {"path": "ar:t1.note", "replacement_text": "two"},
            {"path": "", "replacement_text": {"k": ["a"]}},
            {"path": "", "replacement_text": {"k": ["b"]}},
            {"path": "", "replacement_text": {"k": ["a"]}, "reason": "again"},
        ],
    }
    digest = build_digest([], previous)
    assert digest["tool_outputs"] == {
        "web": [
            {"tool_call_id": "tc_1", "path": "x", "status": "error"},
            {"tool_call_id": "tc_2", "path": "x", "status": "ok"},
            {"tool_call_id": "tc_1", "path": "y", "status": "ok"},
        ]
    }
    assert [(m["tool_call_id"], m["paths"], m["query"], m["hits"]) for m in digest["memsearch"]] == [
        ("tc_1", ["a"], "q", 2),
        ("tc_2", ["a"], "q", 1),
        ("tc_1", ["b"], "q", 1),
        ("tc_1", ["a"], "r", 1),
    ]
    assert digest["hidden"] == [
        {"path": "ar:t1.note", "replacement_text": "two"},
        {"path": "", "replacement_text": {"k": ["a"]}, "reason": "again"},
        {"path": "", "replacement_text": {"k": ["b"]}},
    ]


def test_digest_keys_are_the_keys_build_digest_writes_in_its_order() -> None:
    assert tuple(build_digest(blocks())) == DIGEST_KEYS
    assert tuple(asdict(read_digest(None))) == DIGEST_KEYS
