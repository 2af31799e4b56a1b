"""A timeline's blocks: start a turn, contribute, read back, hide, search, the sources pool.

Each view serves ``…/{conv}/<sub-path>/`` (the ``main`` context) and
``…/{conv}/contexts/{context}/<sub-path>/``.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api import serializers as s
from timeline_app.api.base import TenantView, validated_body, validated_query
from timeline_app.api.schema import operation
from timeline_app.errors import NotFound
from timeline_app.models import Timeline
from timeline_app.rendering.contributions import NewAttachment, NewBlock
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.sources import sources_merge

MAIN = Timeline.DEFAULT_NAME


def _new_block(item: dict[str, Any]) -> NewBlock:
    return NewBlock(
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


def _new_attachment(item: dict[str, Any]) -> NewAttachment:
    return NewAttachment(
        name=item["name"], mime=item["mime"], data=item["base64"], text=item["text"], summary=item["summary"]
    )


class TurnsView(TenantView):
    """A turn's header, its ``user.prompt`` and one block per attachment, with seed paths."""

    @operation(
        summary="Start a turn: header, user.prompt and attachment blocks",
        request=s.TurnIn,
        responses={201: s.BlocksOut},
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.TurnIn, request)
        stored = turn_start(
            timeline=self.timeline_for_write(request, conv, context),
            prompt=data["prompt"],
            turn_id=data.get("turn_id"),
            attachments=[_new_attachment(item) for item in data["attachments"]],
            ts=data.get("ts"),
        )
        return Response(s.BlocksOut({"blocks": stored}).data, status=status.HTTP_201_CREATED)


class BlocksView(TenantView):
    """Blocks contributed by the agent (idempotent by block ``id``), and reading them back."""

    @operation(
        summary="Read blocks back by path, compacted ones included (react.read)",
        parameters=[s.BlocksReadQueryIn],
        responses={200: s.BlocksReadOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(s.BlocksReadQueryIn, request)
        timeline = self.timeline(request, conv, context)
        path = query["path"]
        sources = selectors.sources_in_path(timeline=timeline, path=path)
        if sources is not None:
            return Response(s.BlocksReadOut({"blocks": [], "sources_pool": sources}).data)
        rows = list(selectors.blocks_by_path(timeline=timeline, path=path))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        if not query["include_hidden"]:
            rows = [row for row in rows if not row.hidden]
        return Response(s.BlocksReadOut({"blocks": rows}).data)

    @operation(
        summary="Contribute blocks (idempotent by block id)",
        request=s.BlocksIn,
        responses={201: s.BlocksOut},
        errors=(400, 401, 404, 409),
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.BlocksIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        stored = blocks_append(timeline=timeline, blocks=[_new_block(item) for item in data["blocks"]])
        return Response(s.BlocksOut({"blocks": stored}).data, status=status.HTTP_201_CREATED)


class HideView(TenantView):
    """``react.hide``: the blocks at a path show a replacement text from the next render on."""

    @operation(
        summary="Hide blocks by path behind a replacement text (react.hide)",
        request=s.HideIn,
        responses={200: s.BlocksOut},
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.HideIn, request)
        timeline = self.timeline(request, conv, context)
        rows = blocks_hide(timeline=timeline, path=data["path"], replacement_text=data["replacement_text"])
        return Response(s.BlocksOut({"blocks": rows}).data)


class SearchView(TenantView):
    """``react.memsearch``: every stored block of the context, compacted and hidden ones included."""

    @operation(
        summary="Search the context's blocks, compacted and hidden ones included (react.memsearch)",
        parameters=[s.SearchQueryIn],
        responses={200: s.SearchOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(s.SearchQueryIn, request)["q"]
        timeline = self.timeline(request, conv, context)
        window = selectors.timeline_window(timeline=timeline)
        hits = selectors.blocks_search(timeline=timeline, query=query)
        return Response(s.SearchOut({"results": hits}, context={"query": query, "window": window}).data)


class SourcesView(TenantView):
    """The sources pool; contributed sources merge by URL (existing sids kept, new ones max+1)."""

    @operation(summary="The sources pool", responses={200: s.SourcesPoolOut}, errors=(401, 404))
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        pool = selectors.sources_pool(timeline=self.timeline(request, conv, context))
        return Response(s.SourcesPoolOut({"sources_pool": pool}).data)

    @operation(
        summary="Merge sources by URL (existing sids kept, new rows get max+1)",
        request=s.SourcesIn,
        responses={200: s.SourcesPoolOut},
    )
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.SourcesIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        pool = sources_merge(timeline=timeline, sources=data["sources"])
        return Response(s.SourcesPoolOut({"sources_pool": pool}).data)
