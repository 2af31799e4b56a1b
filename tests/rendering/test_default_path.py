"""``default_path`` (pure, seed 000 "Stable Paths"): the path a well-known block gets when the
client sends none."""

from __future__ import annotations

import pytest

from timeline_app.domain.blocks import sources_pool_path
from timeline_app.domain.contributions import default_path
from timeline_app.rendering.formats import Source, sources_pool_text

TC = {"tool_call_id": "tc_7"}


@pytest.mark.parametrize(
    ("type_", "turn_id", "meta", "path"),
    [
        ("user.prompt", "t1", {}, "ar:t1.user.prompt"),
        ("assistant.completion", "t1", {}, "ar:t1.assistant.completion"),
        ("user.attachment", "t1", {"name": "a.pdf"}, "fi:t1.user.attachments/a.pdf"),
        ("user.attachment", "t1", {"name": ""}, ""),
        ("user.attachment", "t1", {"name": 3}, ""),
        ("react.notes", "t1", {"name": "a.pdf"}, ""),
        ("react.tool.call", "t1", TC, "tc:t1.tc_7.call"),
        ("react.tool.result", "t1", TC, "tc:t1.tc_7.result"),
        ("react.notes", "t1", TC, "ar:t1.react.notes.tc_7"),
        ("react.plan", "t1", TC, ""),
        ("react.tool.call", "t1", {"tool_call_id": 7}, ""),
        ("react.tool.call", "t1", {}, ""),
        ("user.prompt", "", {}, ""),
    ],
)
def test_default_paths(type_: str, turn_id: str, meta: dict, path: str) -> None:
    assert default_path(type=type_, turn_id=turn_id, meta=meta) == path


def test_sources_pool_path_of_one_sid_and_of_a_range() -> None:
    assert (sources_pool_path(3, 3), sources_pool_path(3, 5)) == (
        "so:sources_pool[3]",
        "so:sources_pool[3-5]",
    )


def test_sources_pool_text_lines_by_sid_without_trailing_spaces() -> None:
    sources = [
        Source(sid=5, url=" ", title="", text="  body  "),
        Source(sid=2, url="https://a.org", title="A"),
    ]
    assert sources_pool_text(sources) == "\n".join(
        ["[SOURCES POOL]", "[path: so:sources_pool[2-5]]", "[2] A — https://a.org", "[5]", "body"]
    )
