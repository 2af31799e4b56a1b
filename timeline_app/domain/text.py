"""Short text for people and prompts: the one rule for cutting text with an ellipsis."""

from __future__ import annotations

ELLIPSIS = "…"


def ellipsize(text: str, limit: int) -> str:
    """``text`` unchanged when it fits in ``limit`` characters; otherwise its first ``limit - 1``
    characters (trailing whitespace dropped) and an ellipsis, so never longer than ``limit``."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + ELLIPSIS


def one_line(text: str, limit: int) -> str:
    """Whitespace collapsed to single spaces, then ellipsized to ``limit`` characters.

    Only the first ``2 × limit + 16`` characters are read, so a huge text costs no more than a
    short one; when more follows, the result ends with the ellipsis even if the part read fits.
    """
    head = text[: limit * 2 + 16]
    flat = " ".join(head.split())
    if len(text) > len(head):
        return ellipsize(flat + ELLIPSIS, limit)
    return ellipsize(flat, limit)
