"""The support admin (DESIGN §1): browse conversations, turns, blocks (hidden ones too), summaries
and digests, and preview a render. Read-only for everyone; the only mutating controls are
"compact now" and "export", each behind its own permission (see ``timeline_app.roles``).

Built for huge tables: no full result counts, annotated subqueries instead of per-row queries,
``raw_id_fields``, no inlines of blocks. The conversation's custom pages are the methods of
``pages.ConversationPages``; list filters live in ``filters``, every read in ``selectors``, and how
times, statuses and blocks are shown in ``display``; the compaction admin is in ``compactions``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html

from timeline_app import roles
from timeline_app.admin import display
from timeline_app.admin import selectors as admin_selectors
from timeline_app.admin.filters import (
    ActivityFilter,
    BlockTypeFilter,
    CompactionFailedFilter,
    HasHiddenBlocksFilter,
    TenantFilter,
)
from timeline_app.admin.pages import ConversationPages
from timeline_app.admin.paginator import EstimatedCountPaginator
from timeline_app.admin.sections import digest_tables
from timeline_app.domain import blocks as b
from timeline_app.domain.text import one_line
from timeline_app.models import Block, Conversation

if TYPE_CHECKING:
    from timeline_app.admin.selectors import ListedConversation

admin.site.site_header = "Timeline service"
admin.site.site_title = "Timeline service admin"
admin.site.index_title = "Conversations, timelines and compactions"
# The lists are wide (ids, paths, statuses): on a 1366 px laptop the app sidebar would push the
# status columns out of sight. Breadcrumbs and the index lead everywhere it did.
admin.site.enable_nav_sidebar = False
# The service has no site of its own to view: no "View site" link (it led to a 404 at /).
admin.site.site_url = None


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """View only, for every user including superusers: stored blocks are never edited here."""

    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER  # per-choice counts would scan huge tables
    paginator = EstimatedCountPaginator

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# ---------------------------------------------------------------- conversations


@admin.register(Conversation)
class ConversationAdmin(ConversationPages, ReadOnlyAdmin):
    list_display = (
        "public_id",
        "title_display",
        "tenant",
        "turns",
        "blocks",
        "visible_tokens",
        "last_activity",
        "compactions",
        "cost",
        "cache_read_share",
    )
    list_display_links = ("public_id",)
    list_filter = (("tenant", TenantFilter), HasHiddenBlocksFilter, CompactionFailedFilter, ActivityFilter)
    list_select_related = ("tenant",)
    list_per_page = 50
    search_fields = ("public_id__exact", "title__icontains")
    search_help_text = (
        "An exact conversation id, a compaction id (cmp_…) or a render id (rnd_…), words of the "
        "title, or words in the conversation's blocks (the search index: any context, hidden and "
        "compacted blocks too)."
    )
    ordering = ("-id",)
    actions = ("compact_selected",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        return admin_selectors.in_tenants(admin_selectors.conversation_admin_list(), tenants, via="tenant")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Conversation], search_term: str
    ) -> tuple[QuerySet[Conversation], bool]:
        """The id and title matches, and the conversations with a block matching the words (the
        search index). ``queryset`` is already limited to the staff user's tenants."""
        by_fields, duplicates = super().get_search_results(request, queryset, search_term)
        if not search_term.strip():
            return by_fields, duplicates
        by_record = admin_selectors.conversations_by_record_id(term=search_term.strip())
        if by_record is not None:
            by_fields = by_fields | queryset.filter(pk__in=by_record)
        with_text = admin_selectors.conversations_with_text(query=search_term)
        if with_text is None:
            return by_fields, duplicates
        return by_fields | queryset.filter(pk__in=with_text), duplicates

    def has_compact_permission(self, request: HttpRequest) -> bool:
        return roles.can_compact(request.user)

    @admin.display(description="title")
    def title_display(self, obj: Conversation) -> str:
        return one_line(obj.title, 80) if obj.title else display.NOTHING

    @admin.display(description="turns")
    def turns(self, obj: ListedConversation) -> int:
        return obj.turn_count

    @admin.display(description="blocks")
    def blocks(self, obj: ListedConversation) -> int:
        return obj.block_count

    @admin.display(description="last activity", ordering="last_activity_at")
    def last_activity(self, obj: Conversation) -> str:
        return display.utc(obj.last_activity_at)

    @admin.display(description="visible")
    def visible_tokens(self, obj: ListedConversation) -> int:
        return obj.visible_tokens

    @admin.display(description="compactions · last")
    def compactions(self, obj: ListedConversation) -> str:
        """Applied compactions, and the status of the latest attempt of any kind."""
        count = obj.compaction_count
        status = obj.last_compaction_status
        if not status:
            return str(count)
        return format_html("{} {}", count, display.status_badge(status))

    @admin.display(description="USD", ordering="usage_cost")
    def cost(self, obj: Conversation) -> str:
        """Reported usage, priced (empty: nothing reported)."""
        value = getattr(obj, "usage_cost", None)
        return f"{value.quantize(Decimal('0.0001'))}" if value is not None else display.NOTHING

    @admin.display(description="cached", ordering="usage_read_share")
    def cache_read_share(self, obj: Conversation) -> str:
        share = getattr(obj, "usage_read_share", None)
        return f"{100 * share:.1f} %" if share is not None else display.NOTHING

    @admin.action(
        description="Compact the main context of the selected conversations", permissions=["compact"]
    )
    def compact_selected(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        self.compact_conversations(request, queryset)


# ---------------------------------------------------------------- blocks


@admin.register(Block)
class BlockAdmin(ReadOnlyAdmin):
    list_display = (
        "seq",
        "conversation_link",
        "context",
        "turn_id",
        "type",
        "author",
        "path",
        "tokens",
        "hidden_display",
    )
    list_display_links = ("seq",)
    list_filter = ("hidden", BlockTypeFilter)
    list_select_related = ("timeline__conversation",)
    list_per_page = 100
    raw_id_fields = ("timeline",)
    search_fields = ("path__exact", "turn_id__exact")
    search_help_text = "An exact path (ar:…, tc:…, fi:…, su:…) or turn id."
    ordering = ("timeline", "seq")
    fields = (
        "conversation_link",
        "context",
        "seq",
        "turn_id",
        "type",
        "author",
        "ts_display",
        "mime",
        "path",
        "tokens",
        "hidden_display",
        "replacement_text",
        "replacement_tokens_display",
        "client_id",
        "created_display",
        "text_display",
        "payload",
        "meta_display",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Block]:
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        rows = super().get_queryset(request).defer("data")
        return admin_selectors.in_tenants(rows, tenants, via="timeline__conversation__tenant")

    # Not ``conversation``: the model's own ``conversation`` key (row-level security) would win.
    @admin.display(description="conversation")
    def conversation_link(self, obj: Block) -> str:
        return display.conversation_link(obj.timeline.conversation)

    @admin.display(description="context")
    def context(self, obj: Block) -> str:
        return obj.timeline.name

    @admin.display(description="hidden", ordering="hidden")
    def hidden_display(self, obj: Block) -> str:
        return display.hidden_label(hidden=obj.hidden, reason=obj.hidden_reason)

    @admin.display(description="replacement tokens")
    def replacement_tokens_display(self, obj: Block) -> str:
        """What the block costs hidden; a visible block keeps what the TTL replacement will cost."""
        if obj.hidden:
            return str(obj.replacement_tokens)
        if obj.replacement_tokens:
            return f"{obj.replacement_tokens} once pruned after the cache TTL (visible now)"
        return display.NOTHING

    @admin.display(description="time (client)")
    def ts_display(self, obj: Block) -> str:
        return display.utc(obj.ts)

    @admin.display(description="stored at")
    def created_display(self, obj: Block) -> str:
        return display.utc(obj.created_at)

    @admin.display(description="text")
    def text_display(self, obj: Block) -> str:
        if not obj.text:
            return display.NOTHING
        return format_html('<pre class="tl-pre">{}</pre>', obj.text)

    @admin.display(description="binary payload")
    def payload(self, obj: Block) -> str:
        size = admin_selectors.block_payload_size(block_id=obj.pk)
        return f"{size} bytes ({obj.mime or 'no mime'})" if size else display.NOTHING

    @admin.display(description="meta")
    def meta_display(self, obj: Block) -> str:
        if not obj.meta:
            return display.NOTHING
        if obj.type == b.SUMMARY:
            digest = digest_tables(obj.meta.get("compaction_digest"))
            rest = {k: v for k, v in obj.meta.items() if k != "compaction_digest"}
            return render_to_string(
                "admin/timeline_app/_digest.html",
                {
                    "digest": digest,
                    "meta_json": json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False),
                },
            )
        return format_html(
            '<pre class="tl-pre">{}</pre>', json.dumps(obj.meta, indent=2, sort_keys=True, ensure_ascii=False)
        )
