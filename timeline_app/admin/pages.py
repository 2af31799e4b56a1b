"""The conversation admin's custom pages, as methods of ``ConversationPages``: the conversation
read like its timeline (its change view), the render preview, and the two operator actions
(compact, export), plus the list action that compacts several conversations.

``ConversationAdmin`` inherits this mixin. The pages are ModelAdmin methods (``self`` is the
admin: its site, options, messages and log), kept apart from ``admin.py`` so that ``admin.py``
stays the short declarative list of what each list shows and this module holds the pages with
the one conversation lookup they share. Reads go through ``admin.*selectors``, what a page shows is
built in ``admin.presenters``, writes go through services. Everything shown goes through template
auto-escaping.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import BadRequest, PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.html import format_html

from timeline_app import roles
from timeline_app.admin import cost, display, operations, page_selectors, presenters, sections
from timeline_app.admin import selectors as admin_selectors
from timeline_app.admin.presenters import HISTORY_RENDERS
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.identifiers import COMPACTION_ID_PATTERN, CONTEXT_NAME_PATTERN
from timeline_app.domain.message_validation import storable_problems
from timeline_app.models import Conversation, Timeline
from timeline_app.rendering import replay, window_shape
from timeline_app.rendering.prefix import LEGACY_STRIDE
from timeline_app.selectors.settings import settings_resolve
from timeline_app.services.export import timeline_export

if TYPE_CHECKING:
    from timeline_app.models import WindowedTimeline


TURNS_PER_PAGE = 20
BLOCKS_PER_TURN = 200
MAX_SYSTEM_TOKENS = 10_000_000
COMPACT_AT_ONCE = 20


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _safe_filename(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)[:80] or "conversation"


def _object_key(object_id: str) -> str:
    """The conversation id of an admin URL; one holding a NUL or a lone surrogate (which no id
    can, and PostgreSQL refuses even in a comparison) is a 400 on every conversation page."""
    key = unquote(object_id)
    if storable_problems(key):
        raise BadRequest("a conversation id holds no NUL character or lone surrogate")
    return key


def _pick(matches: list[Conversation]) -> Conversation | None:
    """The conversation a lookup names: by its database id, or by a public id only one tenant uses."""
    return matches[0] if len(matches) == 1 else None


class ConversationPages(admin.ModelAdmin[Conversation]):
    """The custom pages of ``ConversationAdmin``, as its methods (see the module docstring)."""

    # ------------------------------------------------------------ lookup and URLs

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Conversation | None:
        """A conversation by its database id or by a public id only one tenant uses (Django's own
        views, e.g. the history, use this too)."""
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        return _pick(
            admin_selectors.conversation_lookup(object_id=_object_key(object_id), tenant_ids=tenants)
        )

    def conversation_or_redirect(self, request: HttpRequest, object_id: str) -> Conversation | HttpResponse:
        """The one lookup of every page here. A public id several tenants use goes to the list
        of those conversations; an unknown id back to the admin index, as for any admin object."""
        key = _object_key(object_id)
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        matches = admin_selectors.conversation_lookup(object_id=key, tenant_ids=tenants)
        conversation = _pick(matches)
        if conversation is None and matches:
            self.message_user(
                request, f"{len(matches)} conversations have the id “{key}” (one per tenant): pick one."
            )
            return HttpResponseRedirect(display.conversation_search_url(key))
        if conversation is None:
            redirect: HttpResponse = self._get_obj_does_not_exist_redirect(  # type: ignore[attr-defined]
                request, self.opts, object_id
            )
            return redirect
        if not self.has_view_or_change_permission(request, conversation):
            raise PermissionDenied
        return conversation

    def _timeline(self, request: HttpRequest, conversation: Conversation) -> Timeline:
        name = request.POST.get("context") or request.GET.get("context") or Timeline.DEFAULT_NAME
        if not CONTEXT_NAME_PATTERN.match(name):
            raise BadRequest(f"context must match {CONTEXT_NAME_PATTERN.pattern}")
        timeline = admin_selectors.conversation_timeline(conversation=conversation, name=name)
        if timeline is None:
            raise Http404(f"no context named {name!r}")
        return timeline

    def get_urls(self) -> list[URLPattern]:
        pages = {
            "render": self.render_preview_view,
            "compact": self.compact_view,
            "revert": self.revert_view,
            "export": self.export_view,
        }
        return [
            path(
                "<path:object_id>/renders/<int:record_id>/",
                self.admin_site.admin_view(self.past_render_view),
                name="timeline_app_conversation_past_render",
            ),
            # Before the object pages: "usage.csv" is no conversation id.
            path(
                "usage.csv",
                self.admin_site.admin_view(cost.usage_csv_view),
                name="timeline_app_conversation_usage_csv",
            ),
            *(
                path(
                    f"<path:object_id>/{name}/",
                    self.admin_site.admin_view(view),
                    name=f"timeline_app_conversation_{name}",
                )
                for name, view in pages.items()
            ),
            *super().get_urls(),
        ]

    def _page_context(self, request: HttpRequest, title: str) -> dict[str, Any]:
        return {**self.admin_site.each_context(request), "opts": self.opts, "title": title}

    # ------------------------------------------------------------ the conversation page

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """The conversation read like its timeline, one page of turns at a time (nothing about a
        conversation is edited here)."""
        if request.method not in {"GET", "HEAD"}:
            raise PermissionDenied("conversations are not edited in the admin")
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        contexts = page_selectors.conversation_contexts(conversation=conversation)
        timeline = _select_context(contexts, request.GET.get("context"))
        page = page_selectors.timeline_turns_page(
            timeline=timeline, page=request.GET.get("page"), per_page=TURNS_PER_PAGE
        )
        turns = list(page.object_list)
        blocks = page_selectors.turn_blocks(
            timeline=timeline, turn_ids=[t["turn_id"] for t in turns], per_turn=BLOCKS_PER_TURN
        )
        applied = page_selectors.timeline_compactions_applied(timeline=timeline)
        panels = sections.summary_panels(applied)
        renders = page_selectors.timeline_render_history(timeline=timeline, limit=HISTORY_RENDERS)
        context = {
            **self._page_context(request, conversation.title or conversation.public_id),
            **presenters.timeline_facts(conversation, timeline),
            "subtitle": None,
            "conversation": conversation,
            "original": conversation,
            "timeline": timeline,
            "contexts": presenters.context_links(conversation, contexts),
            "page_obj": page,
            "page_links": presenters.page_links(conversation, timeline, page),
            "sections": sections.build_sections(timeline=timeline, turns=turns, blocks=blocks, panels=panels),
            "panels": panels,
            **presenters.timeline_charts(timeline, applied, renders),
            **cost.cost_panel(conversation=conversation, timeline=timeline),
            "compaction_total": page_selectors.timeline_compaction_total(timeline=timeline),
            "operations": presenters.operation_rows(
                page_selectors.timeline_operations(timeline=timeline, limit=presenters.OPERATIONS_SHOWN)
            ),
            "can_compact": roles.can_compact(request.user),
            "can_export": roles.can_export(request.user),
            "is_popup": False,
            "has_view_permission": True,
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/timeline_app/conversation/timeline.html", context)

    # ------------------------------------------------------------ render preview

    def render_preview_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """What the agent would get if it rendered now, as a preview that persists nothing."""
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        timeline = self._timeline(request, conversation)
        options: dict[str, Any] = {
            "include_sources": _flag(request, "sources", True),
            "include_announce": _flag(request, "announce", True),
            "force": _flag(request, "force", False),
            "system_tokens": max(0, min(_int(request.GET.get("system_tokens")), MAX_SYSTEM_TOKENS)),
        }
        outcome, error = operations.dry_render(timeline, **options)
        stream = (outcome.rendered.debug or "") if outcome is not None else ""
        lines = presenters.text_lines(stream)
        title = f"Render preview: {conversation.title or conversation.public_id}"
        context = {
            **self._page_context(request, title),
            **options,
            "conversation": conversation,
            "original": conversation,
            "timeline": timeline,
            "conversation_url": display.conversation_url(conversation, context=timeline.name),
            "outcome": outcome,
            "error": error,
            "lines": lines,
            "tokens": outcome.rendered.tokens if outcome else {},
            "part_count": len(outcome.rendered.blocks) if outcome else 0,
            "pruning": display.pruning_words(outcome.pruning_status) if outcome else "",
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/timeline_app/conversation/render_preview.html", context)

    # ------------------------------------------------------------ a past render

    def past_render_view(self, request: HttpRequest, object_id: str, record_id: int) -> HttpResponse:
        """A recorded render as it returned the context: rendered again from the stored blocks
        and what the record kept, and checked against its prefix fingerprint (``replay``)."""
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        timeline = self._timeline(request, conversation)
        record = admin_selectors.timeline_render_record(timeline=timeline, record_id=record_id)
        if record is None:
            raise Http404("no such render of this context")
        recorded = presenters.recorded_render(record)
        shape = recorded.window
        today_window: list[BlockValue] = []
        if shape is not None:
            blocks = page_selectors.timeline_blocks_of_window(
                timeline=timeline,
                first_seq=shape.first_seq,
                last_seq=shape.last_seq,
                summary_seq=shape.summary_seq,
            )
        elif recorded.segment_stride == LEGACY_STRIDE:
            blocks = page_selectors.timeline_blocks_of_seqs(
                timeline=timeline, seqs=replay.legacy_window_seqs(recorded)
            )
        else:
            blocks, today_window = [], page_selectors.timeline_window_today(timeline=timeline)
        # Today's settings, for a record that kept none: per key, as a render reads them.
        today = settings_resolve(conversation_id=conversation.pk, overrides=conversation.settings)
        result = replay.replay(blocks, recorded, today_settings=today.settings, today_window=today_window)
        inputs = recorded.inputs
        tail = [
            name
            for name, key in (("the sources pool", "include_sources"), ("announce", "include_announce"))
            if inputs.get(key)
        ]
        title = f"Render of {display.utc(record.rendered_at)}: {conversation.title or conversation.public_id}"
        context = {
            **self._page_context(request, title),
            "conversation": conversation,
            "original": conversation,
            "timeline": timeline,
            "record": record,
            "rendered_at": display.utc(record.rendered_at),
            "conversation_url": display.conversation_url(conversation, context=timeline.name),
            "result": result,
            "format": result.options.format if result.options else inputs.get("format", ""),
            "tail": tail,
            "lines": presenters.stream_lines(result.rendered),
            "hidden_seqs": list(window_shape.unpack_seq_set(shape.hidden_seqs)) if shape is not None else [],
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/timeline_app/conversation/past_render.html", context)

    # ------------------------------------------------------------ operator actions

    def compact_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """POST only (CSRF via ``admin_view``); operators and superusers only (403 otherwise)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not roles.can_compact(request.user):
            raise PermissionDenied
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        timeline = self._timeline(request, conversation)
        level, text = operations.compact(timeline)
        messages.add_message(request, level, text)
        self.log_change(request, conversation, f"Queued a compaction of context “{timeline.name}”.")
        return HttpResponseRedirect(display.conversation_url(conversation, context=timeline.name))

    def revert_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Revert the context's newest applied compaction (the page's button asks for a
        confirmation first). POST only; operators and superusers only, as compacting."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not roles.can_compact(request.user):
            raise PermissionDenied
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        timeline = self._timeline(request, conversation)
        public_id = request.POST.get("compaction", "")
        if not COMPACTION_ID_PATTERN.match(public_id):
            raise BadRequest(f"compaction must match {COMPACTION_ID_PATTERN.pattern}")
        actor = f"staff:{request.user.get_username()}"
        level, text = operations.revert(timeline, public_id=public_id, actor=actor)
        messages.add_message(request, level, text)
        if level == messages.SUCCESS:
            self.log_change(request, conversation, f"Reverted compaction {public_id} of “{timeline.name}”.")
        return HttpResponseRedirect(display.conversation_url(conversation, context=timeline.name))

    def compact_conversations(self, request: HttpRequest, queryset: QuerySet[Conversation]) -> None:
        """The list action: queue a compaction of the ``main`` context of each selected conversation
        (at most 20; the worker runs them, not this request)."""
        for timeline in admin_selectors.conversations_main_timelines(
            conversations=queryset[:COMPACT_AT_ONCE]
        ):
            level, text = operations.compact(timeline)
            self.message_user(request, format_html("{}: {}", timeline.conversation.public_id, text), level)
            self.log_change(request, timeline.conversation, "Queued a compaction of context “main”.")

    def export_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Download the context as ``conv.timeline.v1`` JSON; operators and superusers only."""
        if not roles.can_export(request.user):
            raise PermissionDenied
        conversation = self.conversation_or_redirect(request, object_id)
        if isinstance(conversation, HttpResponse):
            return conversation
        timeline = self._timeline(request, conversation)
        payload = timeline_export(timeline=timeline)
        body = json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2, sort_keys=True)
        filename = (
            f"{_safe_filename(conversation.public_id)}.{_safe_filename(timeline.name)}.timeline.v1.json"
        )
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


# ---------------------------------------------------------------- page parts


def _select_context(contexts: list[WindowedTimeline], name: str | None) -> WindowedTimeline:
    wanted = name or Timeline.DEFAULT_NAME
    for context in contexts:
        if context.name == wanted:
            return context
    if name:
        raise Http404(f"no context named {name!r}")
    if not contexts:
        raise Http404("this conversation has no context")
    return contexts[0]


def _flag(request: HttpRequest, name: str, default: bool) -> bool:
    if "submitted" not in request.GET:
        return default
    return request.GET.get(name) in {"1", "on", "true"}
