"""The JSON the service answers, as ``TypedDict`` s: one per component of the OpenAPI schema
(``/api/schema/``; the name of each component is in its docstring). Keys the service may leave out
are ``NotRequired``; values it may send as ``null`` include ``None``. Free-form objects (settings,
``meta``, a rendered part or message) stay ``dict[str, Any]``.

``tests/client/test_answer_types.py`` checks every type here against the server's schema.
"""

# No ``from __future__ import annotations``: TypedDict reads ``NotRequired`` at run time.
from typing import Any, Literal, NotRequired, TypedDict

# -- conversations


class ConversationAnswer(TypedDict):
    """``ConversationOut``: a created or imported conversation, one of a listing."""

    id: str
    title: str
    started_at: str
    settings: dict[str, Any]


class ConversationDetailAnswer(ConversationAnswer):
    """``ConversationDetailOut``: ``GET``/``PATCH …/conversations/{id}/``."""

    block_count: int
    visible_tokens: int
    contexts: list[str]


class ConversationPage(TypedDict):
    """``PaginatedConversationOutList``."""

    results: list[ConversationAnswer]
    next: str | None


# -- blocks, sources, search


class ExportBlock(TypedDict):
    """``ExportBlockOut``: a block of an export (a stored block without its token count)."""

    seq: int
    id: str | None
    type: str
    author: str
    turn_id: str
    ts: str
    mime: str
    text: str
    base64: str
    path: str
    meta: dict[str, Any]
    hidden: bool
    replacement_text: str
    hidden_reason: str


class BlockAnswer(ExportBlock):
    """``BlockOut``: one stored block (an export's block and its token count)."""

    tokens: int


class BlocksAnswer(TypedDict):
    """``BlocksOut``: the blocks a turn, a contribute, a hide or an unhide stored or touched."""

    blocks: list[BlockAnswer]


class SourceAnswer(TypedDict):
    """``SourceOut``: one source of the sources pool."""

    sid: int
    url: str
    title: str
    text: str
    meta: dict[str, Any]


class SourcesAnswer(TypedDict):
    """``SourcesPoolOut``."""

    sources_pool: list[SourceAnswer]


class ReadAnswer(TypedDict):
    """``BlocksReadOut``: the blocks at a path (``sources_pool`` for an ``so:`` path)."""

    blocks: list[BlockAnswer]
    sources_pool: NotRequired[list[SourceAnswer]]
    next: NotRequired[str | None]


class SearchHit(TypedDict):
    """``SearchHitOut``: one block matching a search."""

    seq: int
    type: str
    turn_id: str
    path: str
    hidden: bool
    compacted: bool
    snippet: str


class SearchAnswer(TypedDict):
    """``SearchOut``."""

    results: list[SearchHit]


# -- render


class TokensAnswer(TypedDict):
    """``TokensOut``: the render's token counts."""

    system: int
    visible: int
    tail: int
    total: int
    max_tokens: int


class CompactionFigures(TypedDict):
    """``CompactionOut``: the compaction a render applied."""

    covered_turn_ids: list[str]
    before_tokens: int
    after_tokens: int
    compacted_tokens: int
    summary_path: str
    split_turn_id: str | None


class PruningAnswer(TypedDict):
    """``PruningOut``."""

    status: Literal["disabled", "armed", "fresh", "no_effect", "pruned"]
    hidden_paths: list[str]


class CacheAnswer(TypedDict):
    """``CacheOut``: how much of the previous render's prefix the provider's cache could reuse."""

    previous_render_at: str | None
    reused_prefix_tokens: int
    first_changed_index: int | None
    first_changed_path: str | None
    reason: Literal[
        "first_render", "ttl_expired", "settings_changed", "compacted", "hidden", "appended_only", "other"
    ]


class CacheCreationAnswer(TypedDict):
    """``CacheCreationOut``."""

    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


class UsageForecast(TypedDict):
    """``UsageForecastOut``: what the provider will bill the render's input as."""

    provider: Literal["anthropic", "openai", "google"]
    model: str
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cache_creation: CacheCreationAnswer
    uncached_input_tokens: int
    hit: bool


class RenderAnswer(TypedDict):
    """``RenderOut``: a render. ``request`` only with a native format, ``debug`` only with
    ``format="text", debug=True``."""

    render_id: str | None
    usage_forecast: UsageForecast | None
    blocks: list[dict[str, Any]]
    cache_points: list[int]
    request: NotRequired[dict[str, Any]]
    ending: Literal["user", "continue_text", "prefill", "assistant"] | None
    tokens: TokensAnswer
    compaction: CompactionFigures | None
    pruning: PruningAnswer
    cache: CacheAnswer | None
    ignored_settings: dict[str, str]
    debug: NotRequired[str]


# -- compaction


class CompactionAnswer(TypedDict):
    """``CompactionRecordOut``: one compaction attempt, as ``compact(wait=True)``,
    ``revert_compaction`` and ``GET …/compactions/{id}/`` answer it (every attempt is a row)."""

    id: str
    url: str
    status: Literal["queued", "running", "applied", "rejected", "skipped", "failed", "reverted"]
    trigger: Literal["render", "forced", "background", "manual"]
    before_tokens: int
    after_tokens: int
    compacted_tokens: int
    threshold_tokens: int | None
    summary_path: str | None
    covered_turn_ids: list[str]
    split_turn_id: str | None
    covered_from_seq: int | None
    covered_to_seq: int | None
    first_retained_seq: int | None
    summarizer: str
    model: str
    started_at: str
    finished_at: str | None
    duration_ms: int
    error: str
    reverted_at: str | None
    reverted_by: str


class CompactionsPage(TypedDict):
    """``CompactionsPageOut``: a page of a context's compactions, newest first."""

    results: list[CompactionAnswer]
    next: str | None


OperationKind = Literal[
    "compaction_applied",
    "compaction_rejected",
    "compaction_skipped",
    "compaction_failed",
    "compaction_reverted",
    "ttl_pruned",
    "hidden",
    "unhidden",
    "imported",
    "settings_changed",
    "context_created",
    "context_cleared",
    "context_branched",
    "messages_erased",
]


class OperationAnswer(TypedDict):
    """``OperationOut``: one entry of a context's operations log (``operations``, the export)."""

    id: str
    at: str
    kind: OperationKind
    actor: str
    tokens_before: int | None
    tokens_after: int | None
    seq_ranges: list[list[int]]
    paths: list[str]
    compaction_id: str
    model: str
    cost_usd: str | None
    details: dict[str, Any]


class OperationsPage(TypedDict):
    """``OperationsPageOut``: a page of a context's operations log, newest first."""

    results: list[OperationAnswer]
    next: str | None


class CompactionQueuedAnswer(TypedDict):
    """``CompactQueuedOut``: ``compact(wait=False)`` queued a compaction (or names the one queued
    or running)."""

    id: str
    url: str
    status: Literal["queued", "running", "applied", "rejected", "skipped", "failed"]
    task_id: str


# -- cost


class TokensByKind(TypedDict):
    """``TokensByKindOut`` (a reported call) and ``UsageTotalsTokensOut`` (totals)."""

    uncached_input: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int


class ForecastTokens(TypedDict):
    """``ForecastTokensOut``."""

    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    uncached_input: int


class UsageReportAnswer(TypedDict):
    """``UsageOut``: the stored usage report of one render (``report_usage``)."""

    render_id: str
    context_name: str
    rendered_at: str
    reported_at: str
    provider: str
    model: str
    priced_model: str
    tokens: TokensByKind
    forecast: ForecastTokens
    cost_usd: str | None
    cost_without_cache_usd: str | None
    unexplained_miss: bool
    cache_miss_reason: str
    first_changed_path: str
    compacted_tokens: int
    pruned_tokens: int


class ToolCallAnswer(TypedDict):
    """``ToolCallOut``: a tool call of a recorded reply, for the agent to run."""

    tool_call_id: str
    name: str
    provider_name: str
    input: dict[str, Any]


class ReplyAnswer(TypedDict):
    """``ReplyOut``: a recorded reply (``record_reply``): its stored blocks, the tool calls to run,
    and the render's usage report (None without a render, or for Gemini)."""

    blocks: list[BlockAnswer]
    response_id: str
    format: str
    tool_calls: list[ToolCallAnswer]
    usage: UsageReportAnswer | None


class UsageMiss(TypedDict):
    """``MissOut``: a render whose forecast cache read did not happen, unexplained."""

    render_id: str
    context_name: str
    rendered_at: str
    forecast_read_tokens: int
    cache_read_tokens: int
    cache_miss_reason: str
    first_changed_path: str


class UsageTotals(TypedDict):
    """The totals shared by ``ConversationUsageOut`` and ``ConversationUsageRowOut``."""

    renders: int
    input_tokens: int
    tokens: TokensByKind
    cost_usd: str
    cost_without_cache_usd: str
    saved_usd: str
    unpriced_renders: int
    cache_read_share: float
    forecast_read_tokens: int
    forecast_accuracy: float | None
    unexplained_misses: int
    compacted_tokens: int
    pruned_tokens: int


class UsageAnswer(UsageTotals):
    """``ConversationUsageOut``: ``usage()`` of a conversation or one context."""

    misses: list[UsageMiss]


class TenantUsageRow(UsageTotals):
    """``ConversationUsageRowOut``: one conversation in ``tenant_usage()``."""

    id: str
    title: str


class TenantUsagePage(TypedDict):
    """``PaginatedConversationUsageRowOutList``."""

    results: list[TenantUsageRow]
    next: str | None


# -- export


class ExportCompaction(TypedDict):
    """``ExportCompactionOut``: an applied compaction of an export."""

    covered_turn_ids: list[str]
    before_tokens: int
    after_tokens: int
    compacted_tokens: int
    summary_seq: int
    first_retained_seq: int | None
    covered_from_seq: int | None
    covered_to_seq: int | None
    split_turn_id: str
    trigger: str
    summarizer: str
    model: str


class TimelineExport(TypedDict):
    """``TimelineExportOut``: ``export()``, what ``import_timeline()`` takes back."""

    kind: str
    version: int
    ts: str
    conversation_id: str
    conversation_title: str
    conversation_started_at: str
    context: str
    settings: dict[str, Any]
    view_start_seq: int
    compaction_strategy: dict[str, Any]
    blocks: list[ExportBlock]
    sources_pool: list[SourceAnswer]
    turn_ids: list[str]
    compactions: list[ExportCompaction]
    operations: list[OperationAnswer]


# -- named contexts


class ContextAnswer(TypedDict):
    """``ContextOut``: a named context."""

    name: str
    created_at: str
    compaction_strategy: dict[str, Any]
    message_count: int
    stored_message_count: int


class ContextsAnswer(TypedDict):
    """``ContextListOut``."""

    contexts: list[ContextAnswer]


class MessagesAnswer(TypedDict):
    """``MessagesOut``: OpenAI chat messages, each with its ``timestamp`` and ``message_id``."""

    messages: list[dict[str, Any]]
