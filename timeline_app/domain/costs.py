"""Token cost of a block as it renders: computed once when the block is written or hidden."""

from __future__ import annotations

from timeline_app.domain.block_text import block_text
from timeline_app.domain.blocks import THINKING, Block
from timeline_app.domain.thinking import opaque_tokens, thinking_text_and_opaque
from timeline_app.domain.tokens import count_binary_tokens, count_text_tokens


def block_tokens(block: Block) -> int:
    """Tokens of the block's rendered text (header and path lines included) and binary payload.

    A thinking block (``react.thinking``) renders as its provider's own block: its thinking text
    or reasoning summary, plus a quarter of the characters of its encrypted payload (redacted data,
    ``encrypted_content``); no header, no path line, the signature not counted."""
    if block.type == THINKING:
        readable, opaque = thinking_text_and_opaque(block)
        return count_text_tokens(readable) + opaque_tokens(opaque)
    visible = block.with_hide_state(hidden=False)
    return count_text_tokens(block_text(visible)) + count_binary_tokens(mime=block.mime, data_b64=block.data)


def hidden_tokens(block: Block, replacement_text: str) -> int:
    """Tokens of the block once hidden behind ``replacement_text``."""
    return count_text_tokens(
        block_text(block.with_hide_state(hidden=True, replacement_text=replacement_text))
    )
