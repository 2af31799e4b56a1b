"""Parts in the OpenAI format and the text format's debug view (pure)."""

from __future__ import annotations

from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import Block
from timeline_app.rendering.formats import Part, debug_text, openai_content_part, openai_messages


def test_openai_parts_inline_pdfs_and_images_and_name_the_rest() -> None:
    pdf = Part(kind="document", mime="application/pdf", data="QQ==", filename="a.pdf", placeholder="<pdf>")
    assert openai_content_part(pdf) == {
        "type": "file",
        "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,QQ=="},
    }
    png = Part(kind="image", mime="image/png", data="QQ==", placeholder="<png>")
    assert openai_content_part(png) == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,QQ=="},
    }
    csv = Part(kind="document", mime="text/csv", data="QQ==", placeholder="<csv>")
    tiff = Part(kind="image", mime="image/tiff", data="QQ==", placeholder="<tiff>")
    assert [openai_content_part(p) for p in (csv, tiff)] == [
        {"type": "text", "text": "<csv>"},
        {"type": "text", "text": "<tiff>"},
    ]
    assert openai_content_part(Part(kind="text", text="hi", placeholder="x")) == {
        "type": "text",
        "text": "hi",
    }


def test_debug_text_marks_each_cache_point_in_order() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "c"}]
    assert debug_text(parts, [2, 0]) == "a\n=>[1]\n\n\n\nc\n=>[2]"


def test_an_attachment_is_named_by_meta_then_by_the_last_path_segment_after_its_kind() -> None:
    def header(meta: dict, path: str) -> str:
        block = Block(seq=1, type="user.attachment", mime="application/pdf", meta=meta, path=path)
        return block_text(block).split("\n")[0]

    assert (
        header({"name": "x.png"}, "fi:t1.user.attachments/y.png")
        == "[USER ATTACHMENT] x.png | application/pdf"
    )
    assert (
        header({"name": ""}, "fi:t1.user.attachments/sub/a:b:c.pdf")
        == "[USER ATTACHMENT] b:c.pdf | application/pdf"
    )
    assert header({}, "fi:report.pdf") == "[USER ATTACHMENT] report.pdf | application/pdf"
    assert header({"name": 3}, "") == "[USER ATTACHMENT]  | application/pdf"


def test_openai_messages_positions_and_hidden_stored_messages() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    stored = Block(seq=2, type="message.assistant", meta={"openai_message": call})
    hidden = Block(
        seq=3,
        type="message.tool",
        hidden=True,
        replacement_text="[pruned]",
        meta={"openai_message": {"role": "tool", "tool_call_id": "c1", "content": "big"}},
    )
    note = Block(seq=1, type="react.notes", text="n")
    positions: list[int] = []
    messages = openai_messages([note, stored, hidden, Part(kind="text", text="tail")], positions)
    assert positions == [0, 1, 2, 3]
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "[AI Agent say]:\nn"}]},
        call,
        {"role": "tool", "tool_call_id": "c1", "content": "[pruned]"},
        {"role": "user", "content": [{"type": "text", "text": "tail"}]},
    ]
    messages[1]["tool_calls"][0]["id"] = "changed"  # a deep copy: the stored block is untouched
    assert stored.meta["openai_message"]["tool_calls"][0]["id"] == "c1"
    assert hidden.meta["openai_message"]["content"] == "big"
