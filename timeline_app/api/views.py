"""Thin views: parse → service → serialize. Everything is scoped to the key's tenant."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Any, cast

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.celery import app as celery_app
from timeline_app import selectors
from timeline_app.api import serializers as s
from timeline_app.api.auth import ApiClient
from timeline_app.api.exceptions import error_body
from timeline_app.api.fields import StrictSerializer, query_text
from timeline_app.api.throttling import SharedScopedRateThrottle
from timeline_app.errors import InvalidInput, NotFound
from timeline_app.models import Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.contributions import NewAttachment, NewBlock
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.times import parse_iso
from timeline_app.rendering.tokens import count_text_tokens
from timeline_app.services.background import compaction_enqueue
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.compaction import CompactionOutcome, compaction_run
from timeline_app.services.conversations import conversation_create, timeline_get_or_create
from timeline_app.services.export import timeline_export, timeline_import
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render, timeline_settings
from timeline_app.services.sources import sources_merge

ERROR_RESPONSES = {
    400: OpenApiResponse(description="Invalid input: `{error: {code, message, details}}`"),
    401: OpenApiResponse(description="Missing or wrong API key"),
    404: OpenApiResponse(description="No such conversation or context for this key"),
}

CONTEXT_PARAM = OpenApiParameter(
    "context", str, OpenApiParameter.PATH, description="Named context (`main` on the short paths)."
)


class TenantView(APIView):
    """Base: resolves the caller's tenant, conversation and named context."""

    def tenant(self, request: Request) -> Tenant:
        return cast(ApiClient, request.user).tenant

    def conversation(self, request: Request, conv: str) -> Conversation:
        return selectors.conversation_get(tenant=self.tenant(request), public_id=conv)

    def timeline(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Timeline:
        return selectors.timeline_require(conversation=self.conversation(request, conv), name=context)

    def timeline_for_write(
        self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME
    ) -> Timeline:
        """Writes create a named context on first use (seed 004)."""
        return timeline_get_or_create(conversation=self.conversation(request, conv), name=context)


def _validated(serializer_class: type[StrictSerializer], data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput("the request body must be a JSON object")
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ConversationListView(TenantView):
    PAGE_SIZE = 50

    @extend_schema(
        request=s.ConversationCreateIn,
        responses={201: s.ConversationOut, 409: OpenApiResponse(description="id taken"), **ERROR_RESPONSES},
        summary="Create a conversation",
        operation_id="conversations_create",
    )
    def post(self, request: Request) -> Response:
        data = _validated(s.ConversationCreateIn, request.data)
        conversation = conversation_create(
            tenant=self.tenant(request),
            public_id=data.get("id"),
            title=data["title"],
            settings=data["settings"],
        )
        return Response(s.ConversationOut(conversation).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("cursor", int, description="`next` of the previous page"),
            OpenApiParameter("limit", int, description="page size, 1–200 (default 50)"),
        ],
        responses={200: s.ConversationPageOut, **ERROR_RESPONSES},
        summary="List conversations, newest first",
        operation_id="conversations_list",
    )
    def get(self, request: Request) -> Response:
        try:
            limit = int(request.query_params.get("limit", self.PAGE_SIZE))
            cursor = request.query_params.get("cursor")
            before = int(cursor) if cursor else None
        except ValueError as exc:
            raise InvalidInput("cursor and limit must be integers") from exc
        if not 1 <= limit <= 200:
            raise InvalidInput("limit must be between 1 and 200", details={"limit": limit})
        query = selectors.conversation_list(tenant=self.tenant(request))
        if before is not None:
            query = query.filter(id__lt=before)
        page = list(query[: limit + 1])
        next_url = None
        if len(page) > limit:
            page = page[:limit]
            next_url = request.build_absolute_uri(f"{request.path}?cursor={page[-1].pk}&limit={limit}")
        return Response({"results": s.ConversationOut(page, many=True).data, "next": next_url})


class ConversationDetailView(TenantView):
    @extend_schema(
        responses={200: s.ConversationDetailOut, **ERROR_RESPONSES},
        summary="A conversation",
        operation_id="conversations_retrieve",
    )
    def get(self, request: Request, conv: str) -> Response:
        conversation = self.conversation(request, conv)
        timeline = selectors.timeline_require(conversation=conversation, name=Timeline.DEFAULT_NAME)
        body = dict(s.ConversationOut(conversation).data)
        body.update(
            block_count=selectors.block_count(timeline=timeline),
            visible_tokens=selectors.timeline_visible_tokens(timeline=timeline),
            contexts=selectors.timeline_names(conversation=conversation),
        )
        return Response(body)


class TurnsView(TenantView):
    @extend_schema(
        request=s.TurnIn,
        parameters=[CONTEXT_PARAM],
        responses={201: s.BlocksOut, **ERROR_RESPONSES},
        summary="Start a turn: header, user.prompt and attachment blocks",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.TurnIn, request.data)
        timeline = self.timeline_for_write(request, conv, context)
        attachments = [
            NewAttachment(
                name=item["name"],
                mime=item["mime"],
                data=item["base64"],
                text=item["text"],
                summary=item["summary"],
            )
            for item in data["attachments"]
        ]
        stored = turn_start(
            timeline=timeline,
            prompt=data["prompt"],
            turn_id=data.get("turn_id"),
            attachments=attachments,
            ts=data.get("ts"),
        )
        return Response({"blocks": s.BlockOut(stored, many=True).data}, status=status.HTTP_201_CREATED)


class RenderView(TenantView):
    @extend_schema(
        request=s.RenderIn,
        parameters=[CONTEXT_PARAM],
        responses={200: s.RenderOut, **ERROR_RESPONSES},
        summary="Render the context for the next model call",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.RenderIn, request.data)
        timeline = self.timeline(request, conv, context)
        system_tokens = data.get("system_tokens")
        if system_tokens is None:
            system_tokens = count_text_tokens(data.get("system", ""))
        options = RenderOptions(
            format=data["format"],
            include_sources=data["include_sources"],
            include_announce=data["include_announce"],
            cache_last=data["cache_last"],
            exclude_contributions=tuple(data["exclude_contributions"]),
            include_only_contributions=tuple(data["include_only_contributions"]),
            announce=tuple(data["announce"]),
        )
        now = parse_iso(data["now"]) if "now" in data else None
        outcome = timeline_render(
            timeline=timeline,
            options=options,
            now=now,
            system_tokens=system_tokens,
            max_tokens=data.get("max_tokens"),
            force_sanitize=data["force_sanitize"],
            system_digest=hashlib.sha256(data.get("system", "").encode("utf-8", "surrogatepass")).hexdigest(),
        )
        rendered = outcome.rendered
        body: dict[str, Any] = {
            "blocks": rendered.blocks,
            "cache_points": rendered.cache_points,
            "tokens": rendered.tokens,
            "compaction": _compaction_body(outcome.compaction),
            "pruning": {"status": outcome.pruning_status, "hidden_paths": outcome.hidden_paths},
            "cache": asdict(outcome.cache) if outcome.cache is not None else None,
        }
        if data["debug"] and rendered.debug is not None:
            body["debug"] = rendered.debug
        return Response(body)


def _compaction_body(outcome: CompactionOutcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    body = outcome.as_dict()
    body.pop("status")
    return body


class CompactView(TenantView):
    throttle_scope = "compact"
    throttle_classes = [SharedScopedRateThrottle]

    @extend_schema(
        request=s.CompactIn,
        parameters=[CONTEXT_PARAM],
        responses={
            200: s.CompactResultOut,
            202: s.CompactQueuedOut,
            429: OpenApiResponse(description="Too many compact requests"),
            **ERROR_RESPONSES,
        },
        summary="Compact now (wait=true) or in the background (202 with a task id)",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.CompactIn, request.data)
        timeline = self.timeline(request, conv, context)
        if data["wait"]:
            outcome = compaction_run(
                timeline=timeline,
                settings=timeline_settings(timeline=timeline),
                trigger=Compaction.Trigger.MANUAL,
                force=data["force"],
                system_tokens=data["system_tokens"],
            )
            return Response(outcome.as_dict())
        task_id = compaction_enqueue(
            timeline_id=timeline.pk, trigger=Compaction.Trigger.MANUAL, force=data["force"]
        )
        return Response({"task_id": task_id}, status=status.HTTP_202_ACCEPTED)


class BlocksReadMixin:
    @extend_schema(
        parameters=[
            CONTEXT_PARAM,
            OpenApiParameter(
                "path",
                str,
                required=True,
                description="block path, or a sources selector: so:sources_pool[3,5-6]",
            ),
            OpenApiParameter("include_hidden", bool, description="1 to include hidden blocks (default 0)"),
        ],
        responses={200: s.BlocksReadOut, **ERROR_RESPONSES},
        summary="Read blocks back by path, compacted ones included (react.read)",
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        path = query_text(request.query_params.get("path", ""), "path")
        if not path:
            raise InvalidInput("the path parameter is required", details={"path": "required"})
        include_hidden = _flag(request.query_params.get("include_hidden", "0"), "include_hidden")
        timeline = self.timeline(request, conv, context)  # type: ignore[attr-defined]
        sources = selectors.sources_in_path(timeline=timeline, path=path)
        if sources is not None:
            return Response({"blocks": [], "sources_pool": s.SourceOut(sources, many=True).data})
        rows = list(selectors.blocks_by_path(timeline=timeline, path=path))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        if not include_hidden:
            rows = [row for row in rows if not row.hidden]
        return Response({"blocks": s.BlockOut(rows, many=True).data})


def _flag(value: str, name: str) -> bool:
    if value in ("1", "true"):
        return True
    if value in ("0", "false", ""):
        return False
    raise InvalidInput(f"{name} must be 0 or 1", details={name: value})


class BlocksView(BlocksReadMixin, TenantView):
    @extend_schema(
        request=s.BlocksIn,
        parameters=[CONTEXT_PARAM],
        responses={201: s.BlocksOut, **ERROR_RESPONSES},
        summary="Contribute blocks (idempotent by block id)",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.BlocksIn, request.data)
        new = [
            NewBlock(
                type=item["type"],
                author=item["author"],
                turn_id=item.get("turn_id"),
                ts=item.get("ts"),
                mime=item["mime"],
                text=item["text"],
                data=item["base64"],
                path=item["path"],
                meta=item["meta"],
                client_id=item.get("id"),
            )
            for item in data["blocks"]
        ]
        timeline = self.timeline_for_write(request, conv, context)
        stored = blocks_append(timeline=timeline, blocks=new)
        return Response({"blocks": s.BlockOut(stored, many=True).data}, status=status.HTTP_201_CREATED)


class HideView(TenantView):
    @extend_schema(
        request=s.HideIn,
        parameters=[CONTEXT_PARAM],
        responses={200: s.BlocksOut, **ERROR_RESPONSES},
        summary="Hide blocks by path behind a replacement text (react.hide)",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.HideIn, request.data)
        timeline = self.timeline(request, conv, context)
        rows = blocks_hide(timeline=timeline, path=data["path"], replacement_text=data["replacement_text"])
        return Response({"blocks": s.BlockOut(rows, many=True).data})


class SearchView(TenantView):
    @extend_schema(
        parameters=[CONTEXT_PARAM, OpenApiParameter("q", str, required=True, description="words to find")],
        responses={200: s.SearchOut, **ERROR_RESPONSES},
        summary="Search the context's blocks, compacted and hidden ones included (react.memsearch)",
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        query = query_text(request.query_params.get("q", ""), "q").strip()
        if not query or len(query) > 500:
            raise InvalidInput("q must be 1 to 500 characters", details={"q": query[:50]})
        timeline = self.timeline(request, conv, context)
        compaction = selectors.latest_applied_compaction(timeline=timeline)
        first_visible = compaction.first_retained_seq if compaction and compaction.first_retained_seq else 0
        summary_seq = compaction.summary_block.seq if compaction and compaction.summary_block else None
        hits = [
            {
                "seq": row.seq,
                "type": row.type,
                "turn_id": row.turn_id,
                "path": row.path,
                "hidden": row.hidden,
                "compacted": row.seq < first_visible
                or (row.type == "conv.range.summary" and row.seq != summary_seq),
                "snippet": _snippet(row.text, query),
            }
            for row in selectors.blocks_search(timeline=timeline, query=query)
        ]
        return Response({"results": hits})


def _snippet(text: str, query: str, width: int = 160) -> str:
    lowered = text.lower()
    positions = [lowered.find(word.lower()) for word in query.split()]
    found = [p for p in positions if p >= 0]
    start = max(0, min(found) - width // 3) if found else 0
    piece = text[start : start + width].replace("\n", " ")
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


class SourcesView(TenantView):
    @extend_schema(
        parameters=[CONTEXT_PARAM],
        responses={200: s.SourcesPoolOut, **ERROR_RESPONSES},
        summary="The sources pool",
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        timeline = self.timeline(request, conv, context)
        return Response(
            {"sources_pool": s.SourceOut(selectors.sources_pool(timeline=timeline), many=True).data}
        )

    @extend_schema(
        request=s.SourcesIn,
        parameters=[CONTEXT_PARAM],
        responses={200: s.SourcesPoolOut, **ERROR_RESPONSES},
        summary="Merge sources by URL (existing sids kept, new rows get max+1)",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(s.SourcesIn, request.data)
        timeline = self.timeline_for_write(request, conv, context)
        pool = sources_merge(timeline=timeline, sources=data["sources"])
        return Response({"sources_pool": s.SourceOut(pool, many=True).data})


class TimelineExportView(TenantView):
    @extend_schema(
        parameters=[
            CONTEXT_PARAM,
            OpenApiParameter(
                "window",
                str,
                enum=["all", "visible"],
                description="all blocks (default) or the post-summary window",
            ),
        ],
        responses={200: OpenApiResponse(description="the conv.timeline.v1 payload"), **ERROR_RESPONSES},
        summary="Export the timeline as conv.timeline.v1",
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        window = request.query_params.get("window", "all")
        if window not in ("all", "visible"):
            raise InvalidInput("window must be 'all' or 'visible'", details={"window": window})
        timeline = self.timeline(request, conv, context)
        return Response(timeline_export(timeline=timeline, window=window))


class TimelineImportView(TenantView):
    @extend_schema(
        request=s.TimelineImportIn,
        responses={201: s.ConversationOut, 409: OpenApiResponse(description="id taken"), **ERROR_RESPONSES},
        summary="Create a conversation from a conv.timeline.v1 payload",
        operation_id="conversations_import",
    )
    def post(self, request: Request) -> Response:
        data = _validated(s.TimelineImportIn, request.data)
        conversation = timeline_import(tenant=self.tenant(request), payload=data, public_id=data.get("id"))
        return Response(s.ConversationOut(conversation).data, status=status.HTTP_201_CREATED)


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and readiness: the database, and the broker when one is configured."""

    checks: dict[str, str] = {}
    healthy = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"error: {type(exc).__name__}"
        healthy = False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        checks["broker"] = "eager (no broker)"
    else:
        try:
            with celery_app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:
            checks["broker"] = f"error: {type(exc).__name__}"
            healthy = False
    if not healthy:
        return JsonResponse({**error_body("unavailable", "a dependency is down", checks)}, status=503)
    return JsonResponse({"status": "ok", "checks": checks})
