"""``tool_call_blocks`` (pure): one tool round as the blocks a client would send."""

from __future__ import annotations

from timeline_app.domain.contributions import NewBlock, tool_call_blocks


def test_a_round_with_a_note_and_a_json_result() -> None:
    meta = {"tool_call_id": "tc_1", "tool_id": "web.search"}
    assert tool_call_blocks(
        turn_id="t1",
        tool_call_id="tc_1",
        tool_id="web.search",
        params={"q": "é"},
        result={"hits": 2},
        note="why",
    ) == [
        NewBlock(type="react.notes", author="react", turn_id="t1", text="why", meta=meta),
        NewBlock(
            type="react.tool.call",
            author="react",
            turn_id="t1",
            mime="application/json",
            text='{"tool_id": "web.search", "tool_call_id": "tc_1", "params": {"q": "é"}}',
            meta=meta,
        ),
        NewBlock(
            type="react.tool.result",
            author="tool",
            turn_id="t1",
            mime="application/json",
            text='{"hits": 2}',
            meta={**meta, "status": "ok"},
        ),
    ]


def test_a_text_result_is_stored_as_given_with_its_status_and_mime() -> None:
    blocks = tool_call_blocks(
        turn_id="t2",
        tool_call_id="tc_2",
        tool_id="fs.read",
        params=[],
        result="plain text",
        status="error",
        result_mime="text/plain",
    )
    assert [b.type for b in blocks] == ["react.tool.call", "react.tool.result"]
    result = blocks[1]
    assert (result.text, result.mime, result.meta["status"]) == ("plain text", "text/plain", "error")
    # Each block has its own meta dict: changing one never changes the other.
    blocks[0].meta["x"] = 1
    assert "x" not in result.meta
