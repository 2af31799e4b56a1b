"""Render the context for the next model call, and compact it on demand."""

from __future__ import annotations

import hashlib
from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api import render_serializers as rs
from timeline_app.api.base import SMALL_BODY_BYTES, TenantView, validated_body
from timeline_app.api.compactions import CompactionRecordOut, compaction_url
from timeline_app.api.schema import operation
from timeline_app.api.throttling import SharedScopedRateThrottle
from timeline_app.domain.times import parse_iso
from timeline_app.errors import NotFound
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.request_head import request_head
from timeline_app.selectors.listing import compaction_by_pk
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import compaction_request, compaction_run
from timeline_app.services.render import timeline_render

MAIN = Timeline.DEFAULT_NAME


def prompt_cache_key(timeline: Timeline) -> str:
    """A stable ``prompt_cache_key`` suggestion per context (OpenAI routes equal keys together)."""
    name = f"{timeline.conversation.public_id}/{timeline.name}"
    return "tl-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def render_options(data: dict[str, Any], *, cache_key: str = "") -> RenderOptions:
    return RenderOptions(
        format=data["format"],
        include_sources=data["include_sources"],
        include_announce=data["include_announce"],
        cache_last=data["cache_last"],
        exclude_contributions=tuple(data["exclude_contributions"]),
        include_only_contributions=tuple(data["include_only_contributions"]),
        announce=tuple(data["announce"]),
        system_text=data.get("system", ""),
        prompt_cache_key=cache_key,
        prefill=data["prefill"],
        budget_note=data.get("budget_note"),
    )


class RenderView(TenantView):
    """Blocks with cache points, token counts, and what this render compacted or pruned."""

    @operation(
        summary="Render the context for the next model call",
        request=rs.RenderIn,
        responses={200: rs.RenderOut},
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(rs.RenderIn, request)
        timeline = self.timeline(request, conv, context)
        outcome = timeline_render(
            timeline=timeline,
            options=render_options(data, cache_key=prompt_cache_key(timeline)),
            head=request_head(
                system_text=data.get("system", ""),
                system_tokens=data.get("system_tokens"),
                tools_tokens=data["tools_tokens"],
                model=data.get("model", ""),
            ),
            now=parse_iso(data["now"]) if "now" in data else None,
            max_tokens=data.get("max_tokens"),
            force_sanitize=data["force_sanitize"],
        )
        return Response(rs.RenderOut(outcome, context={"debug": data["debug"]}).data)


class CompactView(TenantView):
    """Compact now (``wait``) or in the background (a Celery task)."""

    max_body_bytes = SMALL_BODY_BYTES  # two flags

    throttle_scope = "compact"
    throttle_classes = [SharedScopedRateThrottle]

    @operation(
        summary="Compact now (wait=true) or in the background (202 with the compaction's id and URL)",
        description="Without `wait`: 202 `{id, url, status, task_id}`; follow `url` "
        "(`…/compactions/{id}/`) from `queued` to its outcome. While a compaction of the context is "
        "queued or running, the answer names that one (a second concurrent run is a no-op). With "
        "`wait`: 200 with the attempt as `GET …/compactions/{id}/` answers it (every attempt is a row: "
        "one that found nothing to do or another compaction running is `skipped`, its `error` says "
        "why with the numbers).",
        request=rs.CompactIn,
        responses={200: CompactionRecordOut, 202: rs.CompactQueuedOut},
        errors=(400, 401, 404, 429),
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(rs.CompactIn, request)
        timeline = self.timeline(request, conv, context)
        if data["wait"]:
            outcome = compaction_run(
                timeline=timeline,
                settings=timeline_settings(timeline=timeline),
                trigger=Compaction.Trigger.MANUAL,
                force=data["force"],
                system_tokens=data["system_tokens"],
            )
            # The row this attempt wrote, answered as ``GET …/compactions/{id}/`` answers it.
            attempt = compaction_by_pk(timeline=timeline, pk=outcome.compaction_id)
            if attempt is None:  # erased while it ran
                raise NotFound(f"no conversation {conv!r}", details={"id": conv})
            return Response(CompactionRecordOut(attempt, context={"request": request}).data)
        row = compaction_request(timeline=timeline, force=data["force"])
        body = {
            "id": row.public_id,
            "url": compaction_url(request, row),
            "status": row.status,
            "task_id": row.task_id,
        }
        return Response(rs.CompactQueuedOut(body).data, status=status.HTTP_202_ACCEPTED)
