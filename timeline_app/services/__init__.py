"""Writes: every state change goes through a function here (HackSoft style, keyword-only)."""

from timeline_app.services.blocks import (
    NewAttachment,
    NewBlock,
    api_key_create,
    api_key_revoke,
    blocks_append,
    conversation_create,
    default_path,
    iso_now,
    new_public_id,
    new_turn_id,
    timeline_get_or_create,
    timeline_require,
    tool_call_blocks,
    turn_start,
)
from timeline_app.services.export import timeline_export, timeline_import
from timeline_app.services.messages import (
    NewMessage,
    context_clear,
    context_create,
    context_set_strategy,
    messages_append,
    parse_messages,
)
from timeline_app.services.sources import sources_merge

__all__ = [
    "NewAttachment",
    "NewBlock",
    "NewMessage",
    "api_key_create",
    "api_key_revoke",
    "blocks_append",
    "context_clear",
    "context_create",
    "context_set_strategy",
    "conversation_create",
    "default_path",
    "iso_now",
    "messages_append",
    "new_public_id",
    "new_turn_id",
    "parse_messages",
    "sources_merge",
    "timeline_export",
    "timeline_get_or_create",
    "timeline_import",
    "timeline_require",
    "tool_call_blocks",
    "turn_start",
]
