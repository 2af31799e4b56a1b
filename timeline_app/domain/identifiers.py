"""The public identifiers that appear in URLs and bodies: one regex each, written once here.

Each identifier has its bare regex (``CONVERSATION_ID``, ...: what the URL converters in
``api/urls.py`` match) and an anchored, compiled form (``..._PATTERN``: what validation and the
OpenAPI schema use). Pure: no Django.
"""

from __future__ import annotations

import re

CONVERSATION_ID = r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}"
"""A conversation's public id (the client's, or ``conv_…`` made up by the server)."""
CONTEXT_NAME = r"[a-z][a-z0-9_]{0,63}"
"""A named context (a timeline of the conversation; ``main`` is the default one)."""
CONTEXT_LABEL = r"[a-z][a-z0-9_]{0,55}"
"""A label a context name is made from (``label_a``, ``label_b`` …: room left for the suffix)."""
COMPACTION_ID = r"cmp_[0-9a-f]{16}"
"""A compaction's public id (``models.new_compaction_public_id``)."""
OPERATION_ID = r"op_[0-9a-f]{16}"
"""An operations log entry's public id (``models.new_operation_id``)."""
RENDER_ID = r"rnd_[A-Za-z0-9_\-]{1,28}"
"""A render's public id (``rnd_`` and a URL-safe token)."""


def anchored(regex: str) -> str:
    """``regex`` matching a whole string: ``^regex$``."""
    return f"^{regex}$"


CONVERSATION_ID_PATTERN = re.compile(anchored(CONVERSATION_ID))
CONTEXT_NAME_PATTERN = re.compile(anchored(CONTEXT_NAME))
LABEL_PATTERN = re.compile(anchored(CONTEXT_LABEL))
COMPACTION_ID_PATTERN = re.compile(anchored(COMPACTION_ID))
RENDER_ID_PATTERN = re.compile(anchored(RENDER_ID))
OPERATION_ID_PATTERN = re.compile(anchored(OPERATION_ID))
