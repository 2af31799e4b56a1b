"""Binary payloads cost what tokens.py documents: 1,600 per image, 1,500 per PDF page (counted by
``/Type /Page`` markers), one page per 50 KB otherwise; block_tokens adds that to the text cost."""

from __future__ import annotations

import base64

import pytest

from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import Block
from timeline_app.domain.costs import block_tokens
from timeline_app.domain.tokens import count_binary_tokens, count_text_tokens


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _pdf(pages: int) -> bytes:
    objects = b"".join(b"%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n" % (k + 2) for k in range(pages))
    return b"%PDF-1.4\n1 0 obj << /Type /Pages /Count " + str(pages).encode() + b" >> endobj\n" + objects


@pytest.mark.parametrize("pages", [1, 2, 3, 7])
def test_pdf_costs_1500_tokens_per_page(pages: int) -> None:
    assert count_binary_tokens(mime="application/pdf", data_b64=_b64(_pdf(pages))) == 1_500 * pages


def test_pdf_page_marker_with_space_counts_and_pages_tree_does_not() -> None:
    raw = b"%PDF-1.4 /Type/Page /Type  /Page /Type /Pages"
    assert count_binary_tokens(mime="application/pdf", data_b64=_b64(raw)) == 3_000


@pytest.mark.parametrize(("size", "pages"), [(1, 1), (50_000, 1), (50_001, 2), (100_000, 2), (100_001, 3)])
def test_documents_without_page_markers_cost_one_page_per_50_kb(size: int, pages: int) -> None:
    data = _b64(b"x" * size)
    assert count_binary_tokens(mime="application/vnd.ms-excel", data_b64=data) == 1_500 * pages
    assert count_binary_tokens(mime="application/pdf", data_b64=data) == 1_500 * pages


def test_page_markers_count_only_in_pdfs() -> None:
    data = _b64(_pdf(4))
    assert count_binary_tokens(mime="application/octet-stream", data_b64=data) == 1_500


def test_images_cost_1600_whatever_their_size_and_empty_payloads_nothing() -> None:
    assert count_binary_tokens(mime="image/png", data_b64=_b64(b"x" * 500_000)) == 1_600
    assert count_binary_tokens(mime="application/pdf", data_b64="") == 0


def test_block_tokens_add_the_document_pages_to_the_text() -> None:
    data = _b64(_pdf(3))
    block = Block(
        seq=1,
        type="user.attachment",
        turn_id="t1",
        author="user",
        mime="application/pdf",
        data=data,
        text="",
        path="fi:t1.user.attachments/menu.pdf",
    )
    assert block_tokens(block) == count_text_tokens(block_text(block)) + 4_500
