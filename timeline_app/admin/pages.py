"""The support admin's custom pages: the conversation timeline, the render preview, and the two
operator actions (compact, export).

Views are reached through ``ConversationAdmin.get_urls()`` (wrapped in ``admin_site.admin_view``:
staff login and CSRF) and check the model permission themselves. Everything shown goes through
template auto-escaping; nothing here marks model text safe.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import BadRequest, PermissionDenied
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connections
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.http import urlencode

from timeline_app import roles
from timeline_app.admin import selectors as admin_selectors
from timeline_app.models import Block, Compaction, Conversation, Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.messages import CONTEXT_NAME_PATTERN
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.settings import SettingsError, resolve_settings
from timeline_app.services.compaction import compaction_run
from timeline_app.services.export import timeline_export
from timeline_app.services.render import timeline_render, timeline_settings

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

logger = logging.getLogger(__name__)

TURNS_PER_PAGE = 20
BLOCKS_PER_TURN = 200
DIGEST_ROWS = 100
PREVIEW_CHARS = 160


if TYPE_CHECKING:
    _Paginator = Paginator[Any]
else:
    _Paginator = Paginator


class EstimatedCountPaginator(_Paginator):
    """A paginator for huge tables: on PostgreSQL an unfiltered list uses the planner's row
    estimate instead of ``COUNT(*)`` (the admin then shows "about N"); filtered lists count."""

    ESTIMATE_ABOVE = 100_000

    @cached_property
    def count(self) -> int:
        queryset: Any = self.object_list
        query = getattr(queryset, "query", None)
        if query is not None and not query.where:
            connection = connections[queryset.db]
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                        [queryset.model._meta.db_table],
                    )
                    row = cursor.fetchone()
                if row and row[0] > self.ESTIMATE_ABOVE:
                    return int(row[0])
        return super().count


# ---------------------------------------------------------------- helpers


def preview(text: str, limit: int = admin_selectors.PREVIEW_CHARS) -> str:
    """One line: whitespace collapsed, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _rows(value: Any) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass
class Capped:
    """The first rows of a list, and how many were left off."""

    rows: list[Any]
    more: int = 0

    @classmethod
    def of(cls, items: list[Any], limit: int = DIGEST_ROWS) -> Capped:
        return cls(items[:limit], max(0, len(items) - limit))

    def __len__(self) -> int:
        return len(self.rows) + self.more


def digest_tables(digest: Any) -> dict[str, Capped]:
    """``meta.compaction_digest`` as table rows, tolerant of missing or malformed keys."""
    digest = digest if isinstance(digest, dict) else {}
    outputs = digest.get("tool_outputs")
    tool_outputs = []
    if isinstance(outputs, dict):
        for tool_id in sorted(outputs):
            for entry in _rows(outputs[tool_id]):
                tool_outputs.append({"tool_id": tool_id, **entry})
    memsearch = [
        {**row, "paths": ", ".join(_strings(row.get("paths")))} for row in _rows(digest.get("memsearch"))
    ]
    artifacts = [
        {**row, "sources_used": ", ".join(str(s) for s in row.get("sources_used") or [])}
        for row in _rows(digest.get("artifacts"))
    ]
    return {
        "artifacts": Capped.of(artifacts),
        "tool_outputs": Capped.of(tool_outputs),
        "memsearch": Capped.of(memsearch),
        "hidden": Capped.of(_rows(digest.get("hidden"))),
        "tool_call_ids": Capped.of(_strings(digest.get("tool_call_ids"))),
        "paths": Capped.of(_strings(digest.get("paths"))),
    }


def block_changelist_url(*, timeline: Timeline, **params: str) -> str:
    query = {"timeline__id__exact": str(timeline.pk), **params}
    return reverse("admin:timeline_app_block_changelist") + "?" + urlencode(query)


def block_change_url(block_pk: int) -> str:
    return reverse("admin:timeline_app_block_change", args=[quote(block_pk)])


def conversation_url(conversation: Conversation, *, context: str = "", page: int | None = None) -> str:
    url = reverse("admin:timeline_app_conversation_change", args=[quote(conversation.pk)])
    params = {}
    if context and context != Timeline.DEFAULT_NAME:
        params["context"] = context
    if page and page > 1:
        params["page"] = str(page)
    return url + ("?" + urlencode(params) if params else "")


# ---------------------------------------------------------------- the conversation page


@dataclass
class BlockRow:
    pk: int
    seq: int
    type: str
    author: str
    path: str
    mime: str
    tokens: int
    preview: str
    hidden: bool
    hidden_reason: str
    replacement_text: str
    replacement_tokens: int
    cleared: bool
    is_summary: bool
    binary_size: int
    url: str


@dataclass
class TurnPart:
    """A turn, or the part of a (split) turn that falls into one section."""

    turn_id: str
    prompt: str
    started: str
    blocks: list[BlockRow]
    block_total: int
    tokens: int
    hidden_count: int
    split: bool = False
    continued: bool = False
    more_blocks: int = 0
    more_url: str = ""


@dataclass
class SummaryPanel:
    compaction: Compaction
    number: int
    latest: bool
    summary: Block | None
    covered_turn_ids: list[str]
    split_turn_id: str
    digest: dict[str, Capped]
    summary_url: str = ""


@dataclass
class Section:
    """Consecutive turns of one page that share their state: under one summary, or visible."""

    panel: SummaryPanel | None
    turns: list[TurnPart] = field(default_factory=list)


def _select_context(contexts: list[Timeline], name: str | None) -> Timeline:
    wanted = name or Timeline.DEFAULT_NAME
    for context in contexts:
        if context.name == wanted:
            return context
    if name:
        raise Http404(f"no context named {name!r}")
    if not contexts:
        raise Http404("this conversation has no context")
    return contexts[0]


def _panels(compactions: list[Compaction]) -> list[SummaryPanel]:
    panels = []
    for number, compaction in enumerate(compactions, start=1):
        summary = compaction.summary_block
        meta = summary.meta if summary is not None and isinstance(summary.meta, dict) else {}
        panels.append(
            SummaryPanel(
                compaction=compaction,
                number=number,
                latest=number == len(compactions),
                summary=summary,
                covered_turn_ids=_strings(compaction.covered_turn_ids),
                split_turn_id=compaction.split_turn_id,
                digest=digest_tables(meta.get("compaction_digest")),
                summary_url=block_change_url(summary.pk) if summary is not None else "",
            )
        )
    return panels


def _block_row(block: Block, *, view_start_seq: int) -> BlockRow:
    head = getattr(block, "text_head", "") or ""
    return BlockRow(
        pk=block.pk,
        seq=block.seq,
        type=block.type,
        author=block.author,
        path=block.path,
        mime=block.mime,
        tokens=block.tokens,
        preview=preview(head, PREVIEW_CHARS),
        hidden=block.hidden,
        hidden_reason=block.hidden_reason,
        replacement_text=block.replacement_text,
        replacement_tokens=block.replacement_tokens,
        cleared=block.seq < view_start_seq,
        is_summary=block.type == b.SUMMARY,
        binary_size=int(getattr(block, "data_size", 0) or 0),
        url=block_change_url(block.pk),
    )


def build_sections(
    *,
    timeline: Timeline,
    turns: list[dict[str, Any]],
    blocks: list[Block],
    panels: list[SummaryPanel],
) -> list[Section]:
    """Group a page of turns under the summaries that compacted them.

    Applied compaction *k* covers the blocks below its first retained seq and at or above the
    previous one's; blocks from the latest first retained seq on are the visible window. A split
    turn therefore shows twice: its prefix under the summary, the rest in the visible part.
    """
    bounds = [p.compaction.first_retained_seq or 0 for p in panels]
    by_turn: dict[str, list[Block]] = {}
    for block in blocks:
        by_turn.setdefault(block.turn_id, []).append(block)

    sections: list[Section] = []
    for turn in turns:
        turn_id = turn["turn_id"]
        turn_blocks = by_turn.get(turn_id, [])
        parts: list[tuple[int, list[Block]]] = []
        for block in turn_blocks:
            key = bisect_right(bounds, block.seq) if block.type != b.SUMMARY else _summary_key(parts, bounds)
            if parts and parts[-1][0] == key:
                parts[-1][1].append(block)
            else:
                parts.append((key, [block]))
        if not parts:
            parts = [(len(panels), [])]
        prompt = next(
            (preview(getattr(x, "text_head", ""), 140) for x in turn_blocks if x.type == b.USER_PROMPT), ""
        )
        started = next((x.ts for x in turn_blocks if x.ts), "")
        shown = len(turn_blocks)
        for index, (key, part_blocks) in enumerate(parts):
            panel = panels[key] if key < len(panels) else None
            part = TurnPart(
                turn_id=turn_id,
                prompt=prompt,
                started=started,
                blocks=[_block_row(x, view_start_seq=timeline.view_start_seq) for x in part_blocks],
                block_total=turn["block_total"],
                tokens=sum(x.replacement_tokens if x.hidden else x.tokens for x in part_blocks),
                hidden_count=sum(1 for x in part_blocks if x.hidden),
                split=len(parts) > 1,
                continued=index > 0,
            )
            if index == len(parts) - 1 and turn["block_total"] > shown:
                part.more_blocks = turn["block_total"] - shown
                part.more_url = block_changelist_url(timeline=timeline, q=turn_id)
            if sections and sections[-1].panel is panel:
                sections[-1].turns.append(part)
            else:
                sections.append(Section(panel=panel, turns=[part]))
    return sections


def _summary_key(parts: list[tuple[int, list[Block]]], bounds: list[int]) -> int:
    # A summary block stays with the part of its turn it was written in (the latest one).
    return parts[-1][0] if parts else len(bounds)


def _context_switch_links(conversation: Conversation, contexts: list[Timeline]) -> list[dict[str, Any]]:
    return [
        {"timeline": context, "url": conversation_url(conversation, context=context.name)}
        for context in contexts
    ]


def conversation_page(
    model_admin: ModelAdmin[Any],
    request: HttpRequest,
    object_id: str,
    extra_context: dict[str, Any] | None = None,
) -> HttpResponse:
    """The conversation read like its timeline, one page of turns at a time."""
    conversation = Conversation.objects.select_related("tenant").filter(pk=_int(unquote(object_id))).first()
    if conversation is None:
        redirect: HttpResponse = model_admin._get_obj_does_not_exist_redirect(  # type: ignore[attr-defined]
            request, model_admin.opts, object_id
        )
        return redirect
    if not model_admin.has_view_or_change_permission(request, conversation):
        raise PermissionDenied
    contexts = admin_selectors.conversation_contexts(conversation=conversation)
    timeline = _select_context(contexts, request.GET.get("context"))
    page = admin_selectors.timeline_turns_page(
        timeline=timeline, page=request.GET.get("page"), per_page=TURNS_PER_PAGE
    )
    turns = list(page.object_list)
    blocks = admin_selectors.turn_blocks(
        timeline=timeline, turn_ids=[t["turn_id"] for t in turns], per_turn=BLOCKS_PER_TURN
    )
    panels = _panels(admin_selectors.timeline_compactions_applied(timeline=timeline))
    sections = build_sections(timeline=timeline, turns=turns, blocks=blocks, panels=panels)
    try:
        settings = resolve_settings(conversation.settings)
    except SettingsError:
        settings = resolve_settings({})
    visible = getattr(timeline, "visible_tokens", 0) or 0
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": conversation.title or conversation.public_id,
        "subtitle": None,
        "conversation": conversation,
        "original": conversation,
        "timeline": timeline,
        "contexts": _context_switch_links(conversation, contexts),
        "page_obj": page,
        "page_links": _page_links(conversation, timeline, page),
        "sections": sections,
        "panels": panels,
        "settings": settings,
        "settings_json": json.dumps(conversation.settings, indent=2, sort_keys=True, ensure_ascii=False),
        "visible_tokens": visible,
        "visible_percent": round(100 * visible / settings.max_tokens, 1) if settings.max_tokens else 0,
        "compaction_limit": settings.compaction_limit,
        "compaction_total": admin_selectors.timeline_compaction_total(timeline=timeline),
        "render_url": _sub_url("render", conversation, timeline),
        "compact_url": _sub_url("compact", conversation, timeline),
        "export_url": _sub_url("export", conversation, timeline),
        "history_url": reverse("admin:timeline_app_compaction_changelist")
        + "?"
        + urlencode({"timeline__id__exact": timeline.pk}),
        "blocks_url": block_changelist_url(timeline=timeline),
        "hidden_blocks_url": block_changelist_url(timeline=timeline, hidden__exact="1"),
        "can_compact": roles.can_compact(request.user),
        "can_export": roles.can_export(request.user),
        "is_popup": False,
        "has_view_permission": True,
        **(extra_context or {}),
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, "admin/timeline_app/conversation/timeline.html", context)


def _page_links(conversation: Conversation, timeline: Timeline, page: Any) -> list[dict[str, Any]]:
    numbers = page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)
    return [
        {
            "number": number,
            "current": number == page.number,
            "ellipsis": number == page.paginator.ELLIPSIS,
            "url": conversation_url(conversation, context=timeline.name, page=number)
            if number != page.paginator.ELLIPSIS
            else "",
        }
        for number in numbers
    ]


def _sub_url(name: str, conversation: Conversation, timeline: Timeline) -> str:
    url = reverse(f"admin:timeline_app_conversation_{name}", args=[quote(conversation.pk)])
    return url + "?" + urlencode({"context": timeline.name})


def _int(value: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _conversation_and_timeline(
    model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str
) -> tuple[Conversation, Timeline]:
    conversation = Conversation.objects.select_related("tenant").filter(pk=_int(unquote(object_id))).first()
    if conversation is None:
        raise Http404("conversation not found")
    if not model_admin.has_view_or_change_permission(request, conversation):
        raise PermissionDenied
    name = request.POST.get("context") or request.GET.get("context") or Timeline.DEFAULT_NAME
    if not CONTEXT_NAME_PATTERN.match(name):
        raise BadRequest(f"context must match {CONTEXT_NAME_PATTERN.pattern}")
    timeline = Timeline.objects.filter(conversation=conversation, name=name).first()
    if timeline is None:
        raise Http404(f"no context named {name!r}")
    timeline.conversation = conversation
    return conversation, timeline


# ---------------------------------------------------------------- render preview


PREVIEW_MAX_CHARS = 200_000


def _flag(request: HttpRequest, name: str, default: bool) -> bool:
    if "submitted" not in request.GET:
        return default
    return request.GET.get(name) in {"1", "on", "true"}


def render_preview_page(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    """What the agent would get if it rendered now, as a dry run that persists nothing."""
    conversation, timeline = _conversation_and_timeline(model_admin, request, object_id)
    include_sources = _flag(request, "sources", True)
    include_announce = _flag(request, "announce", True)
    force = _flag(request, "force", False)
    system_tokens = max(0, min(_int(request.GET.get("system_tokens", "0")), 10_000_000))
    outcome = error = None
    try:
        outcome = timeline_render(
            timeline=timeline,
            options=RenderOptions(
                format="text", include_sources=include_sources, include_announce=include_announce
            ),
            system_tokens=system_tokens,
            force_sanitize=force,
            dry_run=True,
        )
    except Exception as exc:  # a support screen shows the failure instead of a 500
        logger.exception("render preview of timeline %s failed", timeline.pk)
        error = f"{type(exc).__name__}: {exc}"
    lines = []
    stream = outcome.rendered.debug or "" if outcome is not None else ""
    # The page shows at most PREVIEW_MAX_CHARS of the stream (a large context must not make a page
    # of hundreds of megabytes); the rest is named, not shown.
    truncated = max(0, len(stream) - PREVIEW_MAX_CHARS)
    for line in stream[:PREVIEW_MAX_CHARS].split("\n") if stream else []:
        lines.append({"text": line, "mark": line.startswith("=>[") and line.endswith("]")})
    if truncated:
        lines.append({"text": f"… {truncated} more characters not shown", "mark": False})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Render preview: {conversation.title or conversation.public_id}",
        "conversation": conversation,
        "original": conversation,
        "timeline": timeline,
        "conversation_url": conversation_url(conversation, context=timeline.name),
        "outcome": outcome,
        "error": error,
        "lines": lines,
        "tokens": outcome.rendered.tokens if outcome else {},
        "part_count": len(outcome.rendered.blocks) if outcome else 0,
        "include_sources": include_sources,
        "include_announce": include_announce,
        "force": force,
        "system_tokens": system_tokens,
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, "admin/timeline_app/conversation/render_preview.html", context)


# ---------------------------------------------------------------- operator actions


def _compact(timeline: Timeline) -> tuple[int, str]:
    """Run a forced manual compaction; returns a message level and text."""
    try:
        outcome = compaction_run(
            timeline=timeline,
            settings=timeline_settings(timeline=timeline),
            trigger=Compaction.Trigger.MANUAL,
            force=True,
        )
    except Exception as exc:
        logger.exception("manual compaction of timeline %s failed", timeline.pk)
        return messages.ERROR, f"Compaction of “{timeline.name}” failed: {type(exc).__name__}: {exc}"
    if outcome.status == "applied":
        return messages.SUCCESS, (
            f"Compacted “{timeline.name}”: {outcome.before_tokens} → {outcome.after_tokens} tokens "
            f"({len(outcome.covered_turn_ids)} turns summarized)."
        )
    reasons = {
        "skipped": "nothing to compact",
        "busy": "another compaction is running",
        "rejected": "the summary would not have reduced the visible tokens",
    }
    return (
        messages.WARNING,
        f"No compaction of “{timeline.name}”: {reasons.get(outcome.status, outcome.status)}.",
    )


def compact_action(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    """POST only (CSRF via ``admin_view``); operators and superusers only (403 otherwise)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_compact(request.user):
        raise PermissionDenied
    conversation, timeline = _conversation_and_timeline(model_admin, request, object_id)
    level, text = _compact(timeline)
    messages.add_message(request, level, text)
    model_admin.log_change(request, conversation, f"Triggered a compaction of context “{timeline.name}”.")
    return HttpResponseRedirect(conversation_url(conversation, context=timeline.name))


def compact_conversations(model_admin: ModelAdmin[Any], request: HttpRequest, queryset: Any) -> None:
    """The list action: compact the ``main`` context of each selected conversation."""
    timelines = Timeline.objects.filter(
        conversation__in=queryset.values("pk"), name=Timeline.DEFAULT_NAME
    ).select_related("conversation")
    for timeline in timelines:
        level, text = _compact(timeline)
        model_admin.message_user(request, f"{timeline.conversation.public_id}: {text}", level)
        model_admin.log_change(request, timeline.conversation, "Triggered a compaction of context “main”.")


def export_download(model_admin: ModelAdmin[Any], request: HttpRequest, object_id: str) -> HttpResponse:
    """Download the context as ``conv.timeline.v1`` JSON; operators and superusers only."""
    if not roles.can_export(request.user):
        raise PermissionDenied
    conversation, timeline = _conversation_and_timeline(model_admin, request, object_id)
    payload = timeline_export(timeline=timeline)
    body = json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2, sort_keys=True)
    filename = f"{_safe_filename(conversation.public_id)}.{_safe_filename(timeline.name)}.timeline.v1.json"
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _safe_filename(value: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)[:80] or "conversation"
