"""Content parts of a message (pure ``parse_messages``): each malformed part names exactly where
and what, and the payload limits are exact (``max_attachment_bytes`` 3: 4 base64 characters plus
a 256-character allowance for a data URL's prefix = 260)."""

from __future__ import annotations

import pytest

from timeline_app.domain.message_validation import parse_messages
from timeline_app.errors import InvalidInput

AT = "messages[0].content[0]"
LIMIT = 260


def _details(parts: list, role: str = "user") -> dict | None:
    try:
        parse_messages(
            [{"role": role, "content": parts}],
            now_iso="2026-01-01T00:00:00Z",
            max_messages=10,
            max_text_chars=1000,
            max_attachment_bytes=3,
        )
    except InvalidInput as exc:
        return exc.details
    return None


def _part(kind: str, body) -> list:
    return [{"type": kind, kind: body}]


@pytest.mark.parametrize(
    ("parts", "details"),
    [
        (["x"], {AT: "a content part is an object"}),
        ([{"type": "video"}], {f"{AT}.type": "must be one of text, image_url, input_audio, file"}),
        ([{"type": "text"}], {f"{AT}.text": "required"}),
        (_part("text", 3), {f"{AT}.text": "must be a string"}),
        ([{"type": "text", "text": "a", "extra": 1}], {f"{AT}.extra": "unknown field"}),
        (_part("image_url", "u"), {f"{AT}.image_url": "must be an object"}),
        (_part("image_url", {}), {f"{AT}.image_url.url": "required: a non-empty string"}),
        (_part("image_url", {"url": ""}), {f"{AT}.image_url.url": "required: a non-empty string"}),
        (_part("image_url", {"url": 5}), {f"{AT}.image_url.url": "required: a non-empty string"}),
        (
            _part("image_url", {"url": "x" * (LIMIT + 1)}),
            {f"{AT}.image_url.url": "image over the attachment size limit"},
        ),
        (
            _part("image_url", {"url": "u", "detail": "max"}),
            {f"{AT}.image_url.detail": "must be auto, low or high"},
        ),
        (_part("image_url", {"url": "u", "size": 1}), {f"{AT}.image_url.size": "unknown field"}),
        (
            _part("input_audio", {"format": "wav"}),
            {f"{AT}.input_audio.data": "required: base64 audio as a string"},
        ),
        (
            _part("input_audio", {"data": "x" * (LIMIT + 1), "format": "wav"}),
            {f"{AT}.input_audio.data": "audio over the attachment size limit"},
        ),
        (
            _part("input_audio", {"data": "QQ==", "format": "ogg"}),
            {f"{AT}.input_audio.format": "must be wav or mp3"},
        ),
        (
            _part("input_audio", {"data": "QQ==", "x": 1, "format": "wav"}),
            {f"{AT}.input_audio.x": "unknown field"},
        ),
        (_part("file", {}), {f"{AT}.file": "needs file_data or file_id"}),
        (
            _part("file", {"file_id": 3, "filename": 4}),
            {f"{AT}.file.file_id": "must be a string", f"{AT}.file.filename": "must be a string"},
        ),
        (_part("file", {"file_data": 3}), {f"{AT}.file.file_data": "must be a string"}),
        (
            _part("file", {"file_data": "x" * (LIMIT + 1)}),
            {f"{AT}.file.file_data": "file over the attachment size limit"},
        ),
        (_part("file", {"file_id": "f", "other": 1}), {f"{AT}.file.other": "unknown field"}),
        ([], {"messages[0].content": "a list of content parts may not be empty"}),
        ([{"type": "text", "text": "ok"}, 7], {"messages[0].content[1]": "a content part is an object"}),
    ],
)
def test_a_malformed_part_is_named_exactly(parts: list, details: dict) -> None:
    assert _details(parts) == details


@pytest.mark.parametrize(
    "parts",
    [
        _part("text", ""),
        _part("image_url", {"url": "x" * LIMIT}),
        _part("image_url", {"url": "u", "detail": "low"}),
        _part("image_url", {"url": "u", "detail": "auto"}),
        _part("image_url", {"url": "u", "detail": "high"}),
        _part("input_audio", {"data": "x" * LIMIT, "format": "wav"}),
        _part("input_audio", {"data": "QQ==", "format": "mp3"}),
        _part("file", {"file_data": "x" * LIMIT}),
        _part("file", {"file_id": "f", "filename": "a.pdf"}),
    ],
)
def test_a_valid_part_at_the_limits_passes(parts: list) -> None:
    assert _details(parts) is None


def test_an_assistant_may_send_text_and_refusal_parts_only() -> None:
    assert _details(_part("refusal", "no"), role="assistant") is None
    assert _details(_part("refusal", 1), role="assistant") == {f"{AT}.refusal": "must be a string"}
    assert _details(_part("image_url", {"url": "u"}), role="assistant") == {
        f"{AT}.type": "must be one of text, refusal"
    }


def test_every_problem_of_a_part_is_reported() -> None:
    details = _details([{"type": "text", "text": 3, "extra": 1}])
    assert details == {f"{AT}.extra": "unknown field", f"{AT}.text": "must be a string"}
