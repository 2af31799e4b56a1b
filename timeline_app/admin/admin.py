"""The support admin (DESIGN §1): browse conversations, turns, blocks (hidden ones too), summaries
and digests, and preview a render. Read-only for everyone; the only mutating controls are
"compact now" and "export", each behind its own permission (see ``timeline_app.roles``).

Built for huge tables: no full result counts, annotated subqueries instead of per-row queries,
``raw_id_fields``, no inlines of blocks. Custom pages live in ``timeline_app.admin.pages``.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode

from timeline_app import roles
from timeline_app.admin import pages as admin_views
from timeline_app.admin import selectors as admin_selectors
from timeline_app.models import ApiKey, Block, Compaction, Conversation, Tenant
from timeline_app.rendering import blocks as b

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[Any]
else:
    ModelAdmin = admin.ModelAdmin

admin.site.site_header = "Timeline service"
admin.site.site_title = "Timeline service admin"
admin.site.index_title = "Conversations, timelines and compactions"


class ReadOnlyAdmin(ModelAdmin):
    """View only, for every user including superusers: stored blocks are never edited here."""

    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER  # per-choice counts would scan huge tables
    paginator = admin_views.EstimatedCountPaginator

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _status_badge(status: str | None) -> str:
    if not status:
        return "—"
    return format_html('<span class="tl-status tl-status-{}">{}</span>', status, status)


def _conversation_link(conversation: Conversation, label: str | None = None) -> str:
    url = reverse("admin:timeline_app_conversation_change", args=[quote(conversation.pk)])
    return format_html('<a href="{}">{}</a>', url, label or conversation.public_id)


# ---------------------------------------------------------------- list filters


class HasHiddenBlocksFilter(admin.SimpleListFilter):
    title = "hidden blocks"
    parameter_name = "hidden_blocks"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Has hidden blocks"), ("no", "No hidden blocks")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in {"yes", "no"}:
            return admin_selectors.conversations_with_hidden_blocks(queryset, present=self.value() == "yes")
        return queryset


class CompactionFailedFilter(admin.SimpleListFilter):
    title = "compaction failed"
    parameter_name = "compaction_failed"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("last", "Last attempt failed"), ("any", "Any attempt failed")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in {"last", "any"}:
            return admin_selectors.conversations_with_failed_compaction(
                queryset, last_only=self.value() == "last"
            )
        return queryset


class ActivityFilter(admin.SimpleListFilter):
    title = "last activity"
    parameter_name = "active"
    WINDOWS = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("1h", "In the last hour"), ("1d", "In the last day"), ("7d", "In the last 7 days")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        window = self.WINDOWS.get(self.value() or "")
        if window is None:
            return queryset
        return admin_selectors.conversations_active_since(queryset, since=timezone.now() - window)


class BlockTypeFilter(admin.SimpleListFilter):
    """Fixed choices: listing the distinct types of a huge table would scan it."""

    title = "type"
    parameter_name = "type"
    TYPES = (
        b.TURN_HEADER,
        b.USER_PROMPT,
        b.USER_ATTACHMENT,
        b.ASSISTANT_COMPLETION,
        b.TOOL_CALL,
        b.TOOL_RESULT,
        b.NOTES,
        b.PLAN,
        b.PLAN_ACK,
        b.SUMMARY,
    )

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(t, t) for t in self.TYPES]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(type=self.value()) if self.value() else queryset


# ---------------------------------------------------------------- conversations


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = (
        "public_id",
        "title_display",
        "tenant",
        "turns",
        "blocks",
        "visible_tokens",
        "last_activity",
        "compactions",
    )
    list_display_links = ("public_id",)
    list_filter = ("tenant", HasHiddenBlocksFilter, CompactionFailedFilter, ActivityFilter)
    list_select_related = ("tenant",)
    list_per_page = 50
    search_fields = ("public_id__exact", "title__icontains")
    search_help_text = "An exact conversation id, or words of the title."
    ordering = ("-id",)
    actions = ("compact_selected",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return admin_selectors.conversation_admin_list()

    def has_compact_permission(self, request: HttpRequest) -> bool:
        return roles.can_compact(request.user)

    @admin.display(description="title")
    def title_display(self, obj: Conversation) -> str:
        return admin_views.preview(obj.title, 80) if obj.title else "—"

    @admin.display(description="turns")
    def turns(self, obj: Conversation) -> int:
        return int(getattr(obj, "turn_count", 0) or 0)

    @admin.display(description="blocks")
    def blocks(self, obj: Conversation) -> int:
        return int(getattr(obj, "block_count", 0) or 0)

    @admin.display(description="last activity (UTC)", ordering="last_activity_at")
    def last_activity(self, obj: Conversation) -> str:
        return obj.last_activity_at.strftime("%Y-%m-%d %H:%M")

    @admin.display(description="visible tokens")
    def visible_tokens(self, obj: Conversation) -> int:
        return int(getattr(obj, "visible_tokens", 0) or 0)

    @admin.display(description="compactions · last")
    def compactions(self, obj: Conversation) -> str:
        """Applied compactions, and the status of the latest attempt of any kind."""
        count = int(getattr(obj, "compaction_count", 0) or 0)
        status = getattr(obj, "last_compaction_status", None)
        if not status:
            return str(count)
        return format_html("{} {}", count, _status_badge(status))

    @admin.action(
        description="Compact the main context of the selected conversations", permissions=["compact"]
    )
    def compact_selected(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        admin_views.compact_conversations(self, request, queryset[:20])

    def get_urls(self) -> list[URLPattern]:
        def wrap(view: Any, name: str) -> URLPattern:
            def bound(request: HttpRequest, object_id: str) -> HttpResponse:
                return cast(HttpResponse, view(self, request, object_id))

            return path(
                f"<path:object_id>/{name}/",
                self.admin_site.admin_view(bound),
                name=f"timeline_app_conversation_{name}",
            )

        return [
            wrap(admin_views.render_preview_page, "render"),
            wrap(admin_views.compact_action, "compact"),
            wrap(admin_views.export_download, "export"),
            *super().get_urls(),
        ]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """The conversation page is its timeline; nothing about a conversation is edited here."""
        if request.method not in {"GET", "HEAD"}:
            raise PermissionDenied("conversations are not edited in the admin")
        return admin_views.conversation_page(self, request, object_id, extra_context)


# ---------------------------------------------------------------- blocks


@admin.register(Block)
class BlockAdmin(ReadOnlyAdmin):
    list_display = ("seq", "conversation", "context", "turn_id", "type", "author", "path", "tokens", "hidden")
    list_display_links = ("seq",)
    list_filter = ("hidden", BlockTypeFilter)
    list_select_related = ("timeline__conversation",)
    list_per_page = 100
    raw_id_fields = ("timeline",)
    search_fields = ("path__exact", "turn_id__exact")
    search_help_text = "An exact path (ar:…, tc:…, fi:…, su:…) or turn id."
    ordering = ("timeline", "seq")
    fields = (
        "conversation",
        "context",
        "seq",
        "turn_id",
        "type",
        "author",
        "ts",
        "mime",
        "path",
        "tokens",
        "hidden",
        "hidden_reason",
        "replacement_text",
        "replacement_tokens",
        "client_id",
        "created_at",
        "text_display",
        "payload",
        "meta_display",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Block]:
        return super().get_queryset(request).defer("data")

    @admin.display(description="conversation")
    def conversation(self, obj: Block) -> str:
        return _conversation_link(obj.timeline.conversation)

    @admin.display(description="context")
    def context(self, obj: Block) -> str:
        return obj.timeline.name

    @admin.display(description="text")
    def text_display(self, obj: Block) -> str:
        if not obj.text:
            return "—"
        return format_html('<pre class="tl-pre">{}</pre>', obj.text)

    @admin.display(description="binary payload")
    def payload(self, obj: Block) -> str:
        data = Block.objects.filter(pk=obj.pk).values_list("data", flat=True).first()
        return f"{len(data)} bytes ({obj.mime or 'no mime'})" if data else "—"

    @admin.display(description="meta")
    def meta_display(self, obj: Block) -> str:
        if not obj.meta:
            return "—"
        if obj.type == b.SUMMARY:
            digest = admin_views.digest_tables(obj.meta.get("compaction_digest"))
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


# ---------------------------------------------------------------- compactions


@admin.register(Compaction)
class CompactionAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "conversation",
        "context",
        "trigger",
        "status_badge",
        "started_at",
        "duration",
        "tokens",
        "compacted_tokens",
        "summarizer",
        "model",
        "error_short",
    )
    list_filter = ("status", "trigger")
    list_select_related = ("timeline__conversation",)
    list_per_page = 100
    raw_id_fields = ("timeline", "summary_block")
    search_fields = ("timeline__conversation__public_id__exact",)
    search_help_text = "An exact conversation id."
    ordering = ("-id",)
    fields = (
        "conversation",
        "context",
        "trigger",
        "status_badge",
        "started_at",
        "finished_at",
        "duration_ms",
        "summarize_ms",
        "summarizer",
        "model",
        "before_tokens",
        "after_tokens",
        "compacted_tokens",
        "covered_turns",
        "split_turn_id",
        "covered_seqs",
        "first_retained_seq",
        "summary",
        "error",
        "digest_display",
    )

    @admin.display(description="conversation")
    def conversation(self, obj: Compaction) -> str:
        return _conversation_link(obj.timeline.conversation)

    @admin.display(description="context")
    def context(self, obj: Compaction) -> str:
        return obj.timeline.name

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Compaction) -> str:
        return _status_badge(obj.status)

    @admin.display(description="duration")
    def duration(self, obj: Compaction) -> str:
        if obj.finished_at is None:
            return "running"
        return f"{obj.duration_ms} ms (summarize {obj.summarize_ms} ms)"

    @admin.display(description="tokens before → after")
    def tokens(self, obj: Compaction) -> str:
        return f"{obj.before_tokens} → {obj.after_tokens}" if obj.after_tokens else f"{obj.before_tokens} → —"

    @admin.display(description="error")
    def error_short(self, obj: Compaction) -> str:
        return admin_views.preview(obj.error, 80) if obj.error else ""

    @admin.display(description="covered turns")
    def covered_turns(self, obj: Compaction) -> str:
        turns = obj.covered_turn_ids if isinstance(obj.covered_turn_ids, list) else []
        return ", ".join(str(t) for t in turns) or "—"

    @admin.display(description="covered seqs")
    def covered_seqs(self, obj: Compaction) -> str:
        if obj.covered_from_seq is None:
            return "—"
        return f"{obj.covered_from_seq} – {obj.covered_to_seq}"

    @admin.display(description="summary block")
    def summary(self, obj: Compaction) -> str:
        if obj.summary_block_id is None:
            return "—"
        url = reverse("admin:timeline_app_block_change", args=[quote(obj.summary_block_id)])
        return format_html('<a href="{}">block {}</a>', url, obj.summary_block_id)

    @admin.display(description="digest")
    def digest_display(self, obj: Compaction) -> str:
        return render_to_string(
            "admin/timeline_app/_digest.html", {"digest": admin_views.digest_tables(obj.digest)}
        )


# ---------------------------------------------------------------- tenants and keys


@admin.register(Tenant)
class TenantAdmin(ModelAdmin):
    list_display = ("name", "created_at", "conversations")
    search_fields = ("name",)
    ordering = ("name",)
    show_full_result_count = False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting a tenant would delete its conversations: not an admin click

    @admin.display(description="conversations")
    def conversations(self, obj: Tenant) -> str:
        url = (
            reverse("admin:timeline_app_conversation_changelist")
            + "?"
            + urlencode({"tenant__id__exact": obj.pk})
        )
        return format_html('<a href="{}">browse</a>', url)


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    """Keys are created (and shown once) by ``manage.py create_api_key``; never their hash here."""

    list_display = ("prefix_display", "tenant", "name", "created_at", "revoked_at")
    list_select_related = ("tenant",)
    list_filter = ("tenant",)
    fields = ("tenant", "name", "prefix_display", "created_at", "revoked_at")
    ordering = ("-id",)

    @admin.display(description="key")
    def prefix_display(self, obj: ApiKey) -> str:
        return f"{obj.prefix}…"
