"""Reads, with exactly the rows and columns their callers need (HackSoft style, keyword-only).

Callers write ``selectors.<name>``; the functions live in one module per noun: ``conversations``
(keys, conversations, contexts' rows), ``blocks`` (window, tokens, paths, sources, search),
``contexts`` (messages and views of named contexts) and ``renders`` (the render history).
"""

from timeline_app.selectors.blocks import (
    active_plan,
    block_is_compacted,
    blocks_by_path,
    blocks_search,
    latest_applied_compaction,
    sources_in_path,
    sources_pool,
    timeline_visible_tokens,
    timeline_window,
    tokens_from_seq,
    visible_window,
)
from timeline_app.selectors.contexts import (
    ContextInfo,
    context_info,
    context_infos,
    context_view,
    custom_strategies,
    effective_strategy,
    full_context,
    stored_messages,
    strategy_window,
)
from timeline_app.selectors.conversations import (
    api_key_lookup,
    conversation_get,
    conversation_list,
    timeline_current_turn_id,
    timeline_get,
    timeline_names,
    timeline_require,
    timeline_tenant_id,
)
from timeline_app.selectors.renders import (
    previous_render,
    render_history,
)
from timeline_app.selectors.settings import (
    ResolvedSettings,
    settings_resolve,
    timeline_settings,
    timeline_settings_resolved,
)
from timeline_app.selectors.usage import (
    cache_state,
    conversation_usages,
    last_render_for_summary,
    render_for_usage,
    tenant_usage_by_conversation,
    tenant_usage_rows,
    unexplained_misses,
    usage_for_render,
    usage_totals,
)

__all__ = [
    "ContextInfo",
    "ResolvedSettings",
    "active_plan",
    "api_key_lookup",
    "block_is_compacted",
    "blocks_by_path",
    "blocks_search",
    "cache_state",
    "context_info",
    "context_infos",
    "context_view",
    "conversation_get",
    "conversation_list",
    "conversation_usages",
    "custom_strategies",
    "effective_strategy",
    "full_context",
    "last_render_for_summary",
    "latest_applied_compaction",
    "previous_render",
    "render_for_usage",
    "render_history",
    "settings_resolve",
    "sources_in_path",
    "sources_pool",
    "stored_messages",
    "strategy_window",
    "tenant_usage_by_conversation",
    "tenant_usage_rows",
    "timeline_current_turn_id",
    "timeline_get",
    "timeline_names",
    "timeline_require",
    "timeline_settings",
    "timeline_settings_resolved",
    "timeline_tenant_id",
    "timeline_visible_tokens",
    "timeline_window",
    "tokens_from_seq",
    "unexplained_misses",
    "usage_for_render",
    "usage_totals",
    "visible_window",
]
