"""Render the context for the next model call, and compact it on demand."""

from __future__ import annotations

import hashlib
from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api import serializers as s
from timeline_app.api.base import TenantView, validated_body
from timeline_app.api.schema import operation
from timeline_app.api.throttling import SharedScopedRateThrottle
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.times import parse_iso
from timeline_app.rendering.tokens import count_text_tokens
from timeline_app.services.background import compaction_enqueue
from timeline_app.services.compaction import compaction_run
from timeline_app.services.render import timeline_render, timeline_settings

MAIN = Timeline.DEFAULT_NAME


def render_options(data: dict[str, Any]) -> RenderOptions:
    return RenderOptions(
        format=data["format"],
        include_sources=data["include_sources"],
        include_announce=data["include_announce"],
        cache_last=data["cache_last"],
        exclude_contributions=tuple(data["exclude_contributions"]),
        include_only_contributions=tuple(data["include_only_contributions"]),
        announce=tuple(data["announce"]),
    )


def _head_digest(system: str, tools_tokens: int) -> str:
    """What identifies the request's head in the cache fingerprint: the system prompt's hash, and
    the tool definitions' size when the caller gives it (tools precede the system prompt)."""
    digest = hashlib.sha256(system.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}|tools={tools_tokens}" if tools_tokens else digest


class RenderView(TenantView):
    """Blocks with cache points, token counts, and what this render compacted or pruned."""

    @operation(
        summary="Render the context for the next model call",
        request=s.RenderIn,
        responses={200: s.RenderOut},
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.RenderIn, request)
        timeline = self.timeline(request, conv, context)
        system_tokens = data.get("system_tokens")
        if system_tokens is None:
            system_tokens = count_text_tokens(data.get("system", ""))
        outcome = timeline_render(
            timeline=timeline,
            options=render_options(data),
            now=parse_iso(data["now"]) if "now" in data else None,
            system_tokens=system_tokens,
            max_tokens=data.get("max_tokens"),
            force_sanitize=data["force_sanitize"],
            system_digest=_head_digest(data.get("system", ""), data["tools_tokens"]),
            model=data.get("model", ""),
            tools_tokens=data["tools_tokens"],
            system_text=data.get("system", ""),
        )
        return Response(s.RenderOut(outcome, context={"debug": data["debug"]}).data)


class CompactView(TenantView):
    """Compact now (``wait``) or in the background (a Celery task)."""

    throttle_scope = "compact"
    throttle_classes = [SharedScopedRateThrottle]

    @operation(
        summary="Compact now (wait=true) or in the background (202 with a task id)",
        request=s.CompactIn,
        responses={200: s.CompactResultOut, 202: s.CompactQueuedOut},
        errors=(400, 401, 404, 429),
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.CompactIn, request)
        timeline = self.timeline(request, conv, context)
        if data["wait"]:
            outcome = compaction_run(
                timeline=timeline,
                settings=timeline_settings(timeline=timeline),
                trigger=Compaction.Trigger.MANUAL,
                force=data["force"],
                system_tokens=data["system_tokens"],
            )
            return Response(s.CompactResultOut(outcome).data)
        task_id = compaction_enqueue(
            timeline_id=timeline.pk, trigger=Compaction.Trigger.MANUAL, force=data["force"]
        )
        return Response(s.CompactQueuedOut({"task_id": task_id}).data, status=status.HTTP_202_ACCEPTED)
