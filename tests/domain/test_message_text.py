"""``message_text`` (pure): the block text of a stored OpenAI-style message, part by part."""

from __future__ import annotations

from timeline_app.domain.messages import message_text


def test_every_content_part_kind_has_its_line() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "text"},
            {"type": "refusal", "refusal": "no"},
            {"type": "image_url", "image_url": {"url": "https://x.org/a.png"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "input_audio", "input_audio": {"format": "wav", "data": "QUJD"}},
            {"type": "file", "file": {"filename": "a.pdf", "file_id": "f1"}},
            {"type": "file", "file": {"file_id": "f1"}},
            {"type": "file", "file": {}},
            {"type": "other"},
        ],
    }
    assert message_text(message).split("\n") == [
        "look",
        "",
        "[refusal] no",
        "[image: https://x.org/a.png]",
        "[image: data:image/png;base64, 26 chars]",
        "[audio: wav, 4 chars]",
        "[file: a.pdf]",
        "[file: f1]",
        "[file: inline]",
        "",
    ]


def test_tool_results_refusals_and_tool_calls() -> None:
    assert message_text({"role": "tool", "tool_call_id": "c1", "name": "search", "content": "ok"}) == (
        "[tool result c1] search\nok"
    )
    assert message_text({"role": "tool", "tool_call_id": "c1", "content": "ok"}) == "[tool result c1]\nok"
    assistant = {
        "role": "assistant",
        "content": "",
        "refusal": "nope",
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert message_text(assistant) == "[refusal] nope\n[tool call c1] f({})"
