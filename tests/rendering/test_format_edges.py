"""Rendering edges the mutation run found untested (docs/testing.md): texts of hidden blocks
without a replacement, turn headers carrying a text, summaries whose covered turns are not a
list, attachment names, the one-call forms of the format helpers, token counts at their edges,
and the errors of the pure Block's fast constructors."""

from __future__ import annotations

import base64

import pytest

from timeline_app.domain.block_text import block_text, stable_json
from timeline_app.domain.blocks import SUMMARY, TOOL_RESULT, TURN_HEADER, USER_ATTACHMENT, Block
from timeline_app.domain.tokens import DOCUMENT_TOKENS_PER_PAGE, count_binary_tokens, count_text_tokens
from timeline_app.rendering.formats import Part, anthropic_part, openai_messages


def test_a_hidden_block_without_replacement_text_ends_at_its_path() -> None:
    block = Block(seq=3, type=TOOL_RESULT, path="tc:t1.tc_1.result", text="secret", hidden=True)
    assert block_text(block) == "[react.tool.result] (hidden)\n[path: tc:t1.tc_1.result]"


def test_a_turn_header_with_a_text_shows_it_on_the_next_line() -> None:
    header = Block(seq=1, type=TURN_HEADER, turn_id="t1", ts="2026-01-01T00:00:00Z")
    assert block_text(header) == "[TURN t1] ts=2026-01-01T00:00:00Z"
    with_text = Block(seq=1, type=TURN_HEADER, turn_id="t1", ts="2026-01-01T00:00:00Z", text="retry")
    assert block_text(with_text) == "[TURN t1] ts=2026-01-01T00:00:00Z\nretry"


@pytest.mark.parametrize(("covered", "shown"), [(["t1", "t2"], "t1,t2"), ("t1", "t1"), (7, "7")])
def test_a_summary_header_names_its_covered_turns(covered, shown) -> None:
    summary = Block(seq=9, type=SUMMARY, meta={"covered_turn_ids": covered})
    assert block_text(summary) == f"[CONVERSATION SUMMARY] covered_turns={shown}"


@pytest.mark.parametrize(
    ("meta", "path", "name"),
    [
        ({"name": "brief.pdf"}, "fi:t1.user.attachment/other.pdf", "brief.pdf"),
        ({"name": ""}, "fi:t1.user.attachment/other.pdf", "other.pdf"),
        ({"name": 5}, "fi:dir/sub dir/My File.pdf", "My File.pdf"),
        ({}, "so:notes:draft.txt", "notes:draft.txt"),
        ({}, "", ""),
    ],
)
def test_an_attachment_is_named_by_its_meta_or_its_path(meta, path, name) -> None:
    attachment = Block(seq=2, type=USER_ATTACHMENT, mime="application/pdf", path=path, meta=meta)
    assert block_text(attachment).splitlines()[0] == f"[USER ATTACHMENT] {name} | application/pdf"


def test_stable_json_sorts_keys_and_keeps_unicode() -> None:
    assert stable_json({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'


def test_an_anthropic_part_is_uncached_unless_asked() -> None:
    assert anthropic_part(Part(kind="text", text="hi")) == {"type": "text", "text": "hi"}


def test_openai_messages_without_positions() -> None:
    block = Block(seq=1, type="react.notes", text="a note")
    assert openai_messages([block]) == openai_messages([block], [])


def test_token_counts_at_their_edges() -> None:
    assert count_text_tokens("") == 0
    assert count_text_tokens("a") == 1
    # Base64 with a broken padding is not an error: the document counts as one page.
    assert count_binary_tokens(mime="application/pdf", data_b64="abc") == DOCUMENT_TOKENS_PER_PAGE
    pdf = base64.b64encode(b"%PDF-1.4 /Type /Page /Type /Page /Type /Pages").decode()
    assert count_binary_tokens(mime="application/pdf", data_b64=pdf) == 2 * DOCUMENT_TOKENS_PER_PAGE


def test_only_hide_fields_change_through_with_hide_state() -> None:
    block = Block(seq=1, type="react.notes", text="a note")
    with pytest.raises(TypeError, match=r"^not a hide field: \['seq', 'text'\]$"):
        block.with_hide_state(text="other", seq=2)
    hidden = block.with_hide_state(hidden=True, replacement_text="[gone]")
    assert hidden.hidden and hidden.replacement_text == "[gone]" and hidden.text == "a note"
    assert not block.hidden


def test_base64_wrapped_in_lines_still_counts_its_pages() -> None:
    # Clients send MIME-style base64 (a newline every 76 characters): decoded leniently.
    pdf = base64.encodebytes(b"%PDF-1.4 " + b"x" * 200 + b" /Type /Page /Type /Page /Type /Page").decode()
    assert "\n" in pdf.strip()
    assert count_binary_tokens(mime="application/pdf", data_b64=pdf) == 3 * DOCUMENT_TOKENS_PER_PAGE


def test_an_anthropic_part_carries_its_binary_unless_asked_not_to() -> None:
    image = Part(kind="image", mime="image/png", data="iVBORw==", placeholder="<image>")
    source = {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}
    assert anthropic_part(image) == {"type": "image", "source": source}
    assert anthropic_part(image, binary=False) == {"type": "text", "text": "<image>"}
