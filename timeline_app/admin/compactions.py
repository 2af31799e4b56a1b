"""The compaction admin: every compaction row (queued, running, applied, failed) with its trigger,
timings, token figures, summarizer and digest. Read-only, scoped to the staff user's tenants."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html

from timeline_app.admin import display
from timeline_app.admin import selectors as admin_selectors
from timeline_app.admin.admin import ReadOnlyAdmin
from timeline_app.admin.sections import digest_tables
from timeline_app.domain.text import one_line
from timeline_app.models import Compaction


def _quiet(text: str) -> str:
    """A secondary line of a list cell, in the admin's quiet colour."""
    return format_html('<span class="tl-quiet">{}</span>', text) if text else ""


@admin.register(Compaction)
class CompactionAdmin(ReadOnlyAdmin):
    list_display = (
        "public_id",
        "conversation_and_context",
        "status_badge",
        "started",
        "duration",
        "tokens",
        "summarizer_and_model",
        "error_short",
    )
    list_filter = ("status", "trigger")
    list_select_related = ("timeline__conversation",)
    list_per_page = 100
    raw_id_fields = ("timeline", "summary_block")
    search_fields = ("timeline__conversation__public_id__exact", "public_id__exact")
    search_help_text = "An exact conversation id or compaction id (cmp_…)."
    ordering = ("-id",)
    fields = (
        "public_id",
        "conversation_link",
        "context",
        "trigger",
        "status_badge",
        "started",
        "finished",
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
        "reverted_at",
        "reverted_by",
        "digest_display",
    )

    # Not ``conversation``: the model's own ``conversation`` key (row-level security) would win.
    @admin.display(description="conversation")
    def conversation_link(self, obj: Compaction) -> str:
        return display.conversation_link(obj.timeline.conversation)

    @admin.display(description="context")
    def context(self, obj: Compaction) -> str:
        return obj.timeline.name

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Compaction) -> str:
        """The status, its trigger below (one column in the list: the public ``cmp_…`` id needs
        the room the trigger's own column took)."""
        return format_html("{}<br>{}", display.status_badge(obj.status), _quiet(obj.trigger))

    def get_queryset(self, request: HttpRequest) -> QuerySet[Compaction]:
        # The summary block's seq (shown as "seq N") without its text, payload or meta.
        rows = (
            super()
            .get_queryset(request)
            .select_related("timeline__conversation", "summary_block")
            .defer("summary_block__text", "summary_block__data", "summary_block__meta")
        )
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        return admin_selectors.in_tenants(rows, tenants, via="timeline__conversation__tenant")

    @admin.display(description="started", ordering="started_at")
    def started(self, obj: Compaction) -> str:
        return display.utc(obj.started_at)

    @admin.display(description="finished")
    def finished(self, obj: Compaction) -> str:
        return display.utc(obj.finished_at)

    @admin.display(description="duration")
    def duration(self, obj: Compaction) -> str:
        if obj.finished_at is None:
            return "running"
        return format_html("{} ms<br>{}", obj.duration_ms, _quiet(f"summarize {obj.summarize_ms} ms"))

    @admin.display(description="tokens")
    def tokens(self, obj: Compaction) -> str:
        """Before → after, and the compacted tokens (the list's columns fit a laptop screen)."""
        after = obj.after_tokens or display.NOTHING
        return format_html(
            "{} → {}<br>{}", obj.before_tokens, after, _quiet(f"{obj.compacted_tokens} compacted")
        )

    @admin.display(description="conversation · context")
    def conversation_and_context(self, obj: Compaction) -> str:
        return format_html(
            "{}<br>{}", display.conversation_link(obj.timeline.conversation), _quiet(obj.timeline.name)
        )

    @admin.display(description="summarizer")
    def summarizer_and_model(self, obj: Compaction) -> str:
        return format_html("{}<br>{}", obj.summarizer or display.NOTHING, _quiet(obj.model))

    @admin.display(description="error")
    def error_short(self, obj: Compaction) -> str:
        return one_line(obj.error, 80) if obj.error else ""

    @admin.display(description="covered turns")
    def covered_turns(self, obj: Compaction) -> str:
        turns = obj.covered_turn_ids if isinstance(obj.covered_turn_ids, list) else []
        return ", ".join(str(t) for t in turns) or display.NOTHING

    @admin.display(description="covered seqs")
    def covered_seqs(self, obj: Compaction) -> str:
        if obj.covered_from_seq is None:
            return display.NOTHING
        return f"{obj.covered_from_seq} – {obj.covered_to_seq}"

    @admin.display(description="summary block")
    def summary(self, obj: Compaction) -> str:
        if obj.summary_block_id is None or obj.summary_block is None:
            return display.NOTHING
        url = display.block_change_url(obj.summary_block_id)
        return format_html('<a href="{}">{}</a>', url, display.seq_label(obj.summary_block.seq))

    @admin.display(description="digest")
    def digest_display(self, obj: Compaction) -> str:
        return render_to_string("admin/timeline_app/_digest.html", {"digest": digest_tables(obj.digest)})
